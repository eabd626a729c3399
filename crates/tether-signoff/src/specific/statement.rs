//! Does a line state something? Judged on its tokens ([`super::lexer`]), not by counting its
//! letters, and the same way in every language.
//!
//! Each token plays a role: **content** is a name (`timeout`, `app`, `$1`) or a literal (`30`,
//! `8px`, `"port"`); a **bare value** is `true`, `false`, `null`, `None`, `0`, `1` or an empty
//! text — the values any code holds; a **keyword** is a block or declaration word, or the
//! receiver (`fi`, `end`, `return`, `def`, `else`, `self`); the rest is punctuation:
//! relations (`=`, `:`), operators (`+`, `-`, `<`, `!`) and delimiters (brackets, `;`, `,`,
//! `.`, comment markers).
//!
//! A line **states something** when it holds
//!
//! - two operands (content or bare values), one of them content: a value set or a key with its
//!   value (`timeout = 30`, `"port": 8080`, `enabled: true`), an instruction with its argument
//!   (`USER app`, `node 20`), a call with arguments (`add(a, b)`), a comparison (`n < 0`);
//! - an operator touching content: an expression (`-n`, `count++`, `!done`);
//! - or one literal alone, which is a value written down (`22` in `.nvmrc`, `"3.12"`).
//!
//! Otherwise it states nothing, however long its words: only keywords, bare values and
//! punctuation (`} else {`, `return true;`, `exit 1`); one name with nothing said of it
//! (`foo`, `return x`, `main()`, `raise NotImplementedError`); or a key with no value on the
//! line (`jobs:`, `"scripts": {`, `x = [`, `class Stats:`). A keyword used as the line's key is a
//! key, not a keyword (`default: true`, `type: web`).

use super::lexer::{Kind, Token, tokens};

/// What a line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Said {
    /// It states something.
    Something,
    /// Only keywords, bare values and punctuation.
    Nothing,
    /// One name, with nothing said of it.
    LoneName,
    /// One key, with no value on the line.
    KeyWithoutValue,
}

/// The part a token plays in a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A name (`literal: false`) or a literal.
    Content { literal: bool },
    /// `true`, `null`, `None`, `0`, `""`.
    Bare,
    /// A block or declaration word, or the receiver (`self`).
    Keyword,
    /// `=`, `:`.
    Relation,
    /// `+`, `<`, `!`.
    Operator,
    /// Brackets, separators, comment markers.
    Delimiter,
}

impl Role {
    fn is_operand(self) -> bool {
        matches!(self, Role::Content { .. } | Role::Bare)
    }
}

/// What `line` says.
pub(super) fn said(line: &str) -> Said {
    let mut tally = Tally::default();
    for token in tokens(line) {
        let role = role(line, &token);
        if tally.add(token, role) {
            return Said::Something;
        }
    }
    tally.verdict()
}

/// What has been seen of a line so far.
#[derive(Default)]
struct Tally {
    content: usize,
    bare: usize,
    /// The first content token.
    first: Option<First>,
    /// The token before, and its role.
    prev: Option<(Token, Role)>,
    lead: Lead,
}

/// The first content token of a line.
#[derive(Clone, Copy)]
struct First {
    literal: bool,
    /// A relation follows it: it is a key (with no value, unless an operand follows).
    keyed: bool,
    /// A relation comes somewhere after it.
    related: bool,
}

/// Whether the line's first word is a keyword used as a key (`default: true`).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// No word yet.
    #[default]
    Start,
    /// The first word is a keyword.
    Keyword,
    /// … followed by a relation (delimiters may follow).
    Key,
    /// Decided: no keyword is a key.
    Done,
}

impl Tally {
    /// Counts one token; `true` when the line certainly states something.
    fn add(&mut self, token: Token, role: Role) -> bool {
        self.lead = match (self.lead, role) {
            (Lead::Start, Role::Keyword) => Lead::Keyword,
            (Lead::Start, r) if !r.is_operand() => Lead::Start,
            (Lead::Keyword, Role::Relation) | (Lead::Key, Role::Delimiter) => Lead::Key,
            // A keyword as the line's key, with a value: `default: true`.
            (Lead::Key, r) if r.is_operand() => return true,
            _ => Lead::Done,
        };
        if let (Some(first), Role::Relation) = (self.first.as_mut(), role) {
            first.keyed |= self
                .prev
                .is_some_and(|(_, r)| matches!(r, Role::Content { .. }))
                && self.content == 1;
            first.related = true;
        }
        let applied = self.prev.is_some_and(|(before, before_role)| {
            before.touches(&token)
                && matches!(
                    (before_role, role),
                    (Role::Operator, Role::Content { .. }) | (Role::Content { .. }, Role::Operator)
                )
        });
        match role {
            Role::Content { literal } => {
                self.content += 1;
                if self.first.is_none() {
                    self.first = Some(First {
                        literal,
                        keyed: false,
                        related: false,
                    });
                }
            }
            Role::Bare => self.bare += 1,
            _ => {}
        }
        self.prev = Some((token, role));
        applied || self.content >= 2 || (self.content >= 1 && self.bare >= 1)
    }

    /// What the whole line says, when no token made it state something.
    fn verdict(&self) -> Said {
        match self.first {
            None => Said::Nothing,
            Some(First { keyed: true, .. }) => Said::KeyWithoutValue,
            // A literal alone is a value, unless a relation comes after it: a key (`"a" ( :`).
            Some(First {
                literal: true,
                related: false,
                ..
            }) => Said::Something,
            Some(First { literal: true, .. }) => Said::KeyWithoutValue,
            Some(First { literal: false, .. }) => Said::LoneName,
        }
    }
}

/// The role `token` plays in `line`.
fn role(line: &str, token: &Token) -> Role {
    let text = &line[token.start..token.end];
    match token.kind {
        Kind::Word if text.starts_with(['$', '@']) => Role::Content { literal: false },
        Kind::Word if is_one_of(text, BARE) => Role::Bare,
        Kind::Word if is_one_of(text, KEYWORDS) => Role::Keyword,
        Kind::Word => Role::Content { literal: false },
        Kind::Number if is_zero_or_one(text) => Role::Bare,
        Kind::Number | Kind::Text { alnum: true } => Role::Content { literal: true },
        Kind::Text { alnum: false } => Role::Bare,
        Kind::Relation => Role::Relation,
        Kind::Operator => Role::Operator,
        Kind::Delimiter => Role::Delimiter,
    }
}

/// `0`, `1`, `0.0`, `1.00`, `000`: the numbers any code holds (not `10`, `0.5`, `1.2.3`).
fn is_zero_or_one(number: &str) -> bool {
    let mut parts = number.split('.');
    let whole = parts
        .next()
        .unwrap_or_default()
        .trim_start_matches(['0', '_']);
    let fraction = parts.next().unwrap_or_default();
    parts.next().is_none()
        && (whole.is_empty() || whole.trim_end_matches('_') == "1")
        && fraction.chars().all(|c| matches!(c, '0' | '_'))
}

/// Whether `word` is in `list` (sorted, lower case), ignoring ASCII case: a binary search, and
/// none for a word longer than every entry, so a long line costs no more than its length.
fn is_one_of(word: &str, list: &[&str]) -> bool {
    let mut lower = [0u8; LONGEST_WORD];
    let Some(buf) = lower.get_mut(..word.len()) else {
        return false;
    };
    buf.copy_from_slice(word.as_bytes());
    buf.make_ascii_lowercase();
    list.binary_search_by(|k| k.as_bytes().cmp(buf)).is_ok()
}

/// No keyword or bare value is longer.
const LONGEST_WORD: usize = 16;

/// Values any code holds: alone, they say nothing.
pub(super) const BARE: &[&str] = &["false", "nil", "none", "null", "true", "undefined"];

/// Block and declaration words: they shape code and name nothing of it.
pub(super) const KEYWORDS: &[&str] = &[
    "abstract",
    "and",
    "as",
    "async",
    "await",
    "begin",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "def",
    "default",
    "do",
    "done",
    "elif",
    "else",
    "elseif",
    "elsif",
    "end",
    "endcase",
    "endfor",
    "endforeach",
    "endfunction",
    "endif",
    "endmodule",
    "endswitch",
    "endwhile",
    "ensure",
    "enum",
    "esac",
    "except",
    "exit",
    "export",
    "extends",
    "fi",
    "final",
    "finally",
    "fn",
    "for",
    "func",
    "function",
    "goto",
    "if",
    "impl",
    "implements",
    "in",
    "interface",
    "is",
    "let",
    "local",
    "loop",
    "match",
    "module",
    "mut",
    "namespace",
    "new",
    "next",
    "not",
    "or",
    "override",
    "pass",
    "private",
    "protected",
    "pub",
    "public",
    "raise",
    "redo",
    "rescue",
    "retry",
    "return",
    "self",
    "static",
    "struct",
    "sub",
    "super",
    "then",
    "this",
    "throw",
    "throws",
    "trait",
    "try",
    "type",
    "unless",
    "unsafe",
    "until",
    "var",
    "virtual",
    "void",
    "wend",
    "when",
    "where",
    "while",
    "with",
    "yield",
];
