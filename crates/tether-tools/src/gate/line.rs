//! Splitting a shell line into the simple commands it may run, as far as that can be told
//! without running it: separators (`;`, `&&`, `||`, `|`, `&`, newlines), subshell and group
//! parentheses, and the insides of `$( … )` and backticks (also inside double quotes) each give
//! commands of their own. Quotes are removed from words; a word that takes part of its text
//! from an expansion (`$x`, `$( … )`) is marked, since its value is unknown here. Redirections
//! and their targets are dropped. Whatever cannot be parsed (an unclosed quote or substitution)
//! is reported, so the caller can ask instead of guessing.

/// One word of a command, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text, quotes and backslashes removed (expansions kept as written).
    pub text: String,
    /// Whether part of the word comes from an expansion, so its value is unknown.
    pub expanded: bool,
}

/// What a line was split into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// The simple commands, each a non-empty list of words, in order of appearance.
    pub commands: Vec<Vec<Word>>,
    /// Why the split may be incomplete (an unclosed quote, say); empty when it parsed.
    pub unsure: Vec<String>,
}

/// Splits `line` into its commands.
pub fn split(line: &str) -> Split {
    let mut out = Split::default();
    Lexer::new(line, &mut out).run();
    out
}

struct Lexer<'a> {
    chars: Vec<char>,
    at: usize,
    out: &'a mut Split,
    word: Option<Word>,
    command: Vec<Word>,
    /// The next word is a redirection's target, not part of the command.
    target_next: bool,
}

impl<'a> Lexer<'a> {
    fn new(line: &str, out: &'a mut Split) -> Self {
        Lexer {
            chars: line.chars().collect(),
            at: 0,
            out,
            word: None,
            command: Vec::new(),
            target_next: false,
        }
    }

    fn run(mut self) {
        while let Some(c) = self.next() {
            match c {
                ' ' | '\t' | '\r' => self.end_word(),
                '\n' | ';' | '&' | '|' | '(' | ')' => self.end_command(),
                '#' if self.word.is_none() => self.skip_comment(),
                '\\' => match self.next() {
                    Some('\n') | None => {}
                    Some(escaped) => self.push(escaped),
                },
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '$' => self.dollar(),
                '`' => self.backticks(),
                '<' | '>' => self.redirection(),
                other => self.push(other),
            }
        }
        self.end_command();
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.at).copied();
        self.at += usize::from(c.is_some());
        c
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(|| Word {
            text: String::new(),
            expanded: false,
        })
    }

    fn push(&mut self, c: char) {
        self.word().text.push(c);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            if std::mem::take(&mut self.target_next) {
                return;
            }
            self.command.push(word);
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        self.target_next = false;
        if !self.command.is_empty() {
            self.out.commands.push(std::mem::take(&mut self.command));
        }
    }

    fn skip_comment(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    fn single_quoted(&mut self) {
        self.word();
        loop {
            match self.next() {
                Some('\'') => return,
                Some(c) => self.push(c),
                None => return self.unsure("a single quote is not closed"),
            }
        }
    }

    fn double_quoted(&mut self) {
        self.word();
        loop {
            match self.next() {
                Some('"') => return,
                Some('\\') => match self.next() {
                    Some(c @ ('$' | '`' | '"' | '\\')) => self.push(c),
                    Some('\n') => {}
                    Some(c) => {
                        self.push('\\');
                        self.push(c);
                    }
                    None => return self.unsure("a double quote is not closed"),
                },
                Some('$') => self.dollar(),
                Some('`') => self.backticks(),
                Some(c) => self.push(c),
                None => return self.unsure("a double quote is not closed"),
            }
        }
    }

    /// After `$`: a command substitution, `${ … }`, a variable, or a plain `$`.
    fn dollar(&mut self) {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let inner = self.balanced('(', ')');
                self.nested(&inner);
            }
            Some('{') => {
                self.at += 1;
                let inner = self.balanced('{', '}');
                self.word().expanded = true;
                let text = format!("${{{inner}}}");
                self.word().text.push_str(&text);
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                self.word().expanded = true;
                self.push('$');
            }
            _ => self.push('$'),
        }
    }

    fn backticks(&mut self) {
        let mut inner = String::new();
        loop {
            match self.next() {
                Some('`') => break,
                Some('\\') => match self.next() {
                    Some(c @ ('`' | '$' | '\\')) => inner.push(c),
                    Some(c) => {
                        inner.push('\\');
                        inner.push(c);
                    }
                    None => break self.unsure("a backtick substitution is not closed"),
                },
                Some(c) => inner.push(c),
                None => break self.unsure("a backtick substitution is not closed"),
            }
        }
        self.nested(&inner);
    }

    /// The text up to the `close` matching an `open` already read, respecting quotes.
    fn balanced(&mut self, open: char, close: char) -> String {
        let (mut depth, mut inner, mut quote) = (1usize, String::new(), None);
        while let Some(c) = self.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') | (None, '\\') => {
                    inner.push(c);
                    if let Some(escaped) = self.next() {
                        inner.push(escaped);
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return inner;
                    }
                }
                _ => {}
            }
            inner.push(c);
        }
        self.unsure(&format!("a `{open}` is not closed"));
        inner
    }

    /// The commands of a substitution's inside join the list; the word it sits in is unknown.
    fn nested(&mut self, inner: &str) {
        let mut inside = split(inner);
        self.out.commands.append(&mut inside.commands);
        self.out.unsure.append(&mut inside.unsure);
        let word = self.word();
        word.expanded = true;
        word.text.push_str("$(…)");
    }

    /// `<`, `>`, `>>`, `>&`, `<<`, `<<<`, `&>`…: a number just before it is a descriptor, and
    /// the next word is the target.
    fn redirection(&mut self) {
        if self
            .word
            .as_ref()
            .is_some_and(|w| !w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        } else {
            self.end_word();
        }
        while self
            .peek()
            .is_some_and(|c| matches!(c, '<' | '>' | '&' | '|' | '-'))
        {
            self.at += 1;
        }
        self.target_next = true;
    }

    fn unsure(&mut self, why: &str) {
        self.out.unsure.push(why.to_owned());
    }
}
