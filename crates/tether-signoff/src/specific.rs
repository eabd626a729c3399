//! Is a line the run did not change specific enough to back a sign-off? The line-by-line half
//! of the rule (the other half, lines common to many files, is in `common.rs`).
//!
//! A line is judged by what it is, never by counting its letters: a line that could stand in
//! any file proves nothing about this work, however long (`}`, `fi`, `import os`, a license
//! header, `raise NotImplementedError`); a line that states something proves it, however short
//! (`timeout = 30`, `return a - b`, `USER app`, `echo $(($1 + $2))`). In order:
//!
//! 1. a line without a letter or digit is only punctuation (`}`, `);`, `---`);
//! 2. a line recognised by its form is boilerplate of that kind ([`Boilerplate`]: any line of a
//!    license file, a shebang, a standard preamble, a license line, an import, a section header
//!    or Markdown heading, a lone tag);
//! 3. a line of a list file (an ignore file, a requirements file) is an entry, and states it;
//! 4. any other line is read as tokens (`statement.rs`, over the lexer in `lexer.rs`): it
//!    counts when it states something — a value set, a key with its value, an instruction or
//!    call with an argument, an expression, a literal — and not when it holds only keywords,
//!    bare values and punctuation, one name with nothing said of it, or a key with no value.
//!
//! [`weakness`] names what makes an unchanged line too weak, or `None` when it may back a
//! sign-off as far as its own text goes.

mod boilerplate;
mod files;
mod lexer;
mod statement;

use std::path::Path;

pub use boilerplate::Boilerplate;
use files::FileKind;
use statement::Said;

/// Why a line the run did not change proves nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakness {
    /// It holds no letter or digit (`}`, `);`, `---`).
    NoLetters,
    /// It is boilerplate of this kind.
    Boilerplate(Boilerplate),
    /// It names one thing and says nothing of it (`foo`, `return x`, `main()`,
    /// `raise NotImplementedError`).
    LoneName,
    /// The same line is in this many other files of the repository (at least
    /// [`crate::common::COMMON_FILES`]).
    Common {
        /// How many other files hold it (as far as the bounded scan went).
        files: usize,
    },
}

impl Weakness {
    /// How near a line with this weakness came to counting: of the weak lines of a quote, the
    /// nearest one's reason is the one told.
    pub fn nearness(self) -> u8 {
        match self {
            Weakness::NoLetters => 0,
            Weakness::Boilerplate(_) => 1,
            Weakness::LoneName => 2,
            Weakness::Common { .. } => 3,
        }
    }
}

impl std::fmt::Display for Weakness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Weakness::NoLetters => f.write_str("it holds no letter or digit"),
            Weakness::Boilerplate(kind) => write!(f, "it is {kind}, which any file may hold"),
            Weakness::LoneName => f.write_str(
                "it names one thing and states nothing about it (no value, argument or \
                 expression)",
            ),
            Weakness::Common { files } => write!(
                f,
                "the same line is in {files} other files of the repository, so it shows nothing \
                 specific to this work"
            ),
        }
    }
}

/// Whether `line` holds a letter or digit: a changed line without one (`}` moved onto its own
/// line) shows no work.
pub fn holds_letters(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// What makes `line` (normalized: white space collapsed, trimmed) of the file `path` too weak to
/// back a sign-off when the run did not change it, judging by its own text; `None` when it may.
pub fn weakness(path: &Path, line: &str) -> Option<Weakness> {
    if !holds_letters(line) {
        return Some(Weakness::NoLetters);
    }
    let file = FileKind::of(path);
    if let Some(kind) = boilerplate::by_form(file, line) {
        return Some(Weakness::Boilerplate(kind));
    }
    if file == FileKind::List && !line.starts_with('#') {
        return None;
    }
    match statement::said(line) {
        Said::Something => None,
        Said::Nothing => Some(Weakness::Boilerplate(Boilerplate::Keyword)),
        Said::KeyWithoutValue => Some(Weakness::Boilerplate(Boilerplate::Header)),
        Said::LoneName => Some(Weakness::LoneName),
    }
}

#[cfg(test)]
#[path = "specific_tests.rs"]
mod tests;
