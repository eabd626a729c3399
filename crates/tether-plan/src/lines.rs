//! The line table: where each line of the plan starts and ends, and how it ends.
//!
//! Every patch is expressed against this table, so that tether can change exactly the bytes it
//! means to and leave every other byte — including each line's own terminator — as it was.

use serde::Serialize;

/// How a line ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
    /// The last line of a file that does not end with a newline.
    None,
}

impl LineEnding {
    /// The bytes of this ending.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
            LineEnding::None => "",
        }
    }
}

/// One line of the source: `content` excludes the terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// Byte offset of the first byte of the line.
    pub start: usize,
    /// Byte offset one past the last content byte (the terminator starts here).
    pub content_end: usize,
    /// How the line ends.
    pub ending: LineEnding,
    /// Whether the content's last byte is a bare `\r` (possible only on an unterminated last
    /// line, or before a lone CR that is not a line break).
    pub ends_in_cr: bool,
}

impl Line {
    /// Byte offset one past the terminator.
    pub fn end(&self) -> usize {
        self.content_end + self.ending.as_str().len()
    }
}

/// Splits `text` into lines. An empty text has no lines; a text ending in a newline has no empty
/// line after it.
pub(crate) fn split(text: &str) -> Vec<Line> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 20 + 1);
    let mut start = 0;
    let mut push = |start: usize, content_end: usize, ending: LineEnding| {
        lines.push(Line {
            start,
            content_end,
            ending,
            ends_in_cr: content_end > start && bytes[content_end - 1] == b'\r',
        });
    };
    for nl in memchr::memchr_iter(b'\n', bytes) {
        if nl > start && bytes[nl - 1] == b'\r' {
            push(start, nl - 1, LineEnding::CrLf);
        } else {
            push(start, nl, LineEnding::Lf);
        }
        start = nl + 1;
    }
    if start < bytes.len() {
        push(start, bytes.len(), LineEnding::None);
    }
    lines
}

/// The ending tether uses for lines it inserts: the first terminator found in the file, or `\n`.
pub(crate) fn dominant(lines: &[Line]) -> LineEnding {
    lines
        .iter()
        .map(|l| l.ending)
        .find(|e| *e != LineEnding::None)
        .unwrap_or(LineEnding::Lf)
}
