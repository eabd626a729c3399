//! One line as a stream of tokens: words, numbers, quoted texts, relations, operators and
//! delimiters — the lexer-level view shared by most languages and file formats, with no parser
//! of any of them. It never fails (every character lands in some token) and holds no more than
//! the line it reads: the tokens are produced one at a time.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A name or keyword: letters, digits and `_`, not starting with a digit, perhaps after a
    /// `$` or `@` sigil (`timeout`, `$1`, `@Override`).
    Word,
    /// A number: starts with a digit (`8080`, `3.12`, `8px`, `0x1f`).
    Number,
    /// A quoted text (`"port"`, `'json'`); `alnum` says whether it holds a letter or digit.
    Text {
        /// Whether it holds a letter or digit.
        alnum: bool,
    },
    /// Binds a key to a value: `=`, `:`, `:=`, `=>`.
    Relation,
    /// Computes or compares: `+`, `-`, `==`, `<`, `!`, `&&`, `+=`, `++`, …
    Operator,
    /// Groups, separates or marks, and says nothing by itself: brackets, `;`, `,`, `.`, `::`,
    /// `->`, `#`, comment markers (`//`, `/*`, `*/`, `<!--`, `-->`) and any other character.
    Delimiter,
}

/// One token of a line: its kind and where it is (byte offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl Token {
    /// Whether `next` starts where this token ends (no white space between them).
    pub(super) fn touches(&self, next: &Token) -> bool {
        self.end == next.start
    }
}

/// The characters operators, relations and some comment markers are made of.
const OPERATOR_CHARS: &str = "=+-*/%<>!&|^~?:";

/// The tokens of `line`, in order.
pub(super) fn tokens(line: &str) -> Lexer<'_> {
    Lexer { line, pos: 0 }
}

/// The tokens of one line.
pub(super) struct Lexer<'a> {
    line: &'a str,
    pos: usize,
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let rest = &self.line[self.pos..];
        let skipped = rest.len() - rest.trim_start().len();
        let start = self.pos + skipped;
        let rest = &self.line[start..];
        let mut chars = rest.chars();
        let c = chars.next()?;
        let next = chars.next();
        let (kind, len) = if c == '"' || c == '`' || (c == '\'' && !self.after_word(start)) {
            quoted(rest, c)
        } else if c.is_ascii_digit() {
            (Kind::Number, number(rest))
        } else if is_word_char(c) {
            (Kind::Word, run(rest, is_word_char))
        } else if matches!(c, '$' | '@') && next.is_some_and(is_word_char) {
            (Kind::Word, c.len_utf8() + run(&rest[1..], is_word_char))
        } else if OPERATOR_CHARS.contains(c) {
            let len = run(rest, |c| OPERATOR_CHARS.contains(c));
            (operator(&rest[..len]), len)
        } else {
            (Kind::Delimiter, c.len_utf8())
        };
        self.pos = start + len;
        Some(Token {
            kind,
            start,
            end: start + len,
        })
    }
}

impl Lexer<'_> {
    /// Whether the character before `at` is a letter or digit: a `'` there is an apostrophe
    /// (`don't`), not a quote.
    fn after_word(&self, at: usize) -> bool {
        self.line[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The length in bytes of the longest prefix of `text` whose characters all satisfy `keep`.
fn run(text: &str, keep: impl Fn(char) -> bool) -> usize {
    text.find(|c: char| !keep(c)).unwrap_or(text.len())
}

/// The length of the number at the start of `text`: letters, digits and `_` (`8px`, `0x1f`,
/// `1_000`), and a `.` between digits (`3.12`, `1.2.3`; `0.` is `0` and a `.`).
fn number(text: &str) -> usize {
    let mut len = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let dot_before_digit =
            c == '.' && chars.peek().is_some_and(|(_, next)| next.is_ascii_digit());
        if !(is_word_char(c) || dot_before_digit) {
            break;
        }
        len = i + c.len_utf8();
    }
    len
}

/// A quoted text opened by `quote` at the start of `text`, up to its closing quote (a backslash
/// escapes the next character) or the end of the line.
fn quoted(text: &str, quote: char) -> (Kind, usize) {
    let mut alnum = false;
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return (Kind::Text { alnum }, i + c.len_utf8());
        }
        alnum |= c.is_alphanumeric();
    }
    (Kind::Text { alnum }, text.len())
}

/// What a run of operator characters is.
fn operator(run: &str) -> Kind {
    let comment = run.starts_with("//")
        || run.starts_with("/*")
        || run.ends_with("*/")
        || run.starts_with("<!--")
        || run.ends_with("-->");
    match run {
        _ if comment => Kind::Delimiter,
        "::" | "->" => Kind::Delimiter,
        "=" | ":" | ":=" | "=>" => Kind::Relation,
        _ => Kind::Operator,
    }
}
