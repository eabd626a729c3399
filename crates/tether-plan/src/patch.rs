//! Exact, line-level patches.
//!
//! A patch is a single splice of the original text: it replaces a few bytes inside one line (a
//! status value, a checkbox mark) or inserts whole lines. Nothing else is re-serialised, so every
//! line a patch does not target stays byte-identical, terminator included.

use std::ops::Range;

use crate::lines::{Line, LineEnding};

/// One splice: replace `range` of the original text with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The byte range of the original text that is replaced (empty for an insertion).
    pub range: Range<usize>,
    /// The replacement.
    pub text: String,
}

/// A set of non-overlapping splices computed against one version of the text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    edits: Vec<Edit>,
}

impl Patch {
    pub(crate) fn new(mut edits: Vec<Edit>) -> Self {
        edits.sort_by_key(|e| (e.range.start, e.range.end));
        Patch { edits }
    }

    /// The splices, in text order.
    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Applies the patch to `original`, which must be the text it was computed from.
    pub fn apply(&self, original: &str) -> String {
        let added: usize = self.edits.iter().map(|e| e.text.len()).sum();
        let mut out = String::with_capacity(original.len() + added);
        let mut at = 0;
        for e in &self.edits {
            out.push_str(&original[at..e.range.start]);
            out.push_str(&e.text);
            at = e.range.end;
        }
        out.push_str(&original[at..]);
        out
    }
}

/// Inserts `new_lines` (contents without terminators) after line `after` (0-based index into
/// `lines`), or at the very start of the text when `after` is `None`.
///
/// Each inserted line ends with `ending`. When the line before the insertion point has no
/// terminator (the file does not end with a newline), the insertion starts with a terminator
/// instead, so that file still does not end with one.
pub(crate) fn insert_after(
    lines: &[Line],
    after: Option<usize>,
    new_lines: &[&str],
    ending: LineEnding,
) -> Edit {
    let eol = ending.as_str();
    let mut text = String::new();
    let at = match after.and_then(|i| lines.get(i)) {
        None => 0,
        Some(line) if line.ending == LineEnding::None => {
            // A bare `\r` at the end of the file would fuse with an `\n` into one CRLF and
            // change that line's content; joining with `\r\n` keeps its `\r` its own.
            let ends_in_cr = line.ends_in_cr;
            for (i, l) in new_lines.iter().enumerate() {
                text.push_str(if i == 0 && ends_in_cr { "\r\n" } else { eol });
                text.push_str(l);
            }
            return Edit {
                range: line.end()..line.end(),
                text,
            };
        }
        Some(line) => line.end(),
    };
    for l in new_lines {
        text.push_str(l);
        text.push_str(eol);
    }
    Edit {
        range: at..at,
        text,
    }
}

/// Replaces `range` (relative to the start of `line`) with `text`.
pub(crate) fn replace_in_line(line: &Line, range: Range<usize>, text: &str) -> Edit {
    Edit {
        range: line.start + range.start..line.start + range.end,
        text: text.to_owned(),
    }
}

/// Makes a log entry one line: newlines become spaces, surrounding white space is trimmed.
pub(crate) fn one_line(entry: &str) -> String {
    entry
        .split(['\r', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
