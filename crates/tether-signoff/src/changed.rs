//! The lines this run changed: the best evidence a judge can quote, however short.
//!
//! They are the lines of the work tree that differ from the workspace as the run began: the
//! lines added or modified since the run's starting snapshot (the new side of `git diff -U0`
//! between that snapshot and one of now, renames seen as a delete and an add; a new file's
//! every line). A deleted line changes nothing that could be quoted. tether's own state
//! (`.tether/`) is left out, and so are files a snapshot left out. They are computed once per
//! sign-off attempt (`diff.rs`), bounded like every git command sign-off runs: git output past
//! its cap is cut from the front, and a cut only ever loses changed lines (a stricter check),
//! never invents them.
//!
//! When no line is known to be changed — no snapshot of the workspace as the run began, or git
//! failed — [`ChangedLines`] says why, and every quote must then be specific (see
//! [`crate::quotes`]).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use tether_config::STATE_DIR;

/// Why no line is known to be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// No snapshot of the workspace as the run began: a run an older tether began, a snapshot
    /// that failed, or no run to compare with.
    NoStart,
    /// More files were left out of the starting snapshot than the run recorded by name.
    StartIncomplete,
    /// tether's git needs a sandbox the kernel cannot enforce here.
    NoSandbox,
    /// The snapshot taken as the run began is no longer whole: an object it borrowed from the
    /// person's repository was pruned there (a start is copied whole when pinned; this is one
    /// that could not be).
    StartLost,
    /// git failed or did not finish.
    GitFailed,
}

impl Unknown {
    /// Why git's `error` leaves the changed lines unknown.
    pub(crate) fn of(error: &tether_git::GitError) -> Unknown {
        match error {
            tether_git::GitError::NoSandbox { .. } => Unknown::NoSandbox,
            _ => Unknown::GitFailed,
        }
    }
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unknown::NoStart => "there is no snapshot of the workspace as the run began",
            Unknown::StartIncomplete => {
                "too many files were left out of the snapshot taken as the run began"
            }
            Unknown::NoSandbox => "tether's git runs only in a sandbox, which cannot be built here",
            Unknown::StartLost => {
                "the snapshot taken as the run began is no longer whole (a file's contents it \
                 borrowed from the repository were pruned by git gc)"
            }
            Unknown::GitFailed => "git could not say what changed",
        })
    }
}

/// Which lines of one file changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileLines {
    /// Every line (a file that is wholly new).
    Whole,
    /// These 1-based line numbers, in order.
    Ranges(Vec<RangeInclusive<usize>>),
}

impl FileLines {
    fn contains(&self, line: usize) -> bool {
        match self {
            FileLines::Whole => true,
            FileLines::Ranges(ranges) => ranges.iter().any(|r| r.contains(&line)),
        }
    }
}

/// The lines this run changed, by file (relative to the workspace root), or why they are not
/// known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedLines {
    known: Result<BTreeMap<PathBuf, FileLines>, Unknown>,
}

impl ChangedLines {
    /// No line is known to be changed, for this reason.
    pub const fn unknown(why: Unknown) -> Self {
        ChangedLines { known: Err(why) }
    }

    /// These files changed these lines (a file listed with no range changed none that can be
    /// quoted).
    pub fn known(files: BTreeMap<PathBuf, FileLines>) -> Self {
        ChangedLines { known: Ok(files) }
    }

    /// From git's output: `diff` is `git diff -U0` from the run's starting snapshot to one of
    /// now; the files in `left_out` (left out of either snapshot) have no line known to be
    /// changed.
    pub(crate) fn from_diff(diff: &str, left_out: &BTreeSet<&str>) -> Self {
        let mut files = parse_diff(diff);
        files.retain(|path, lines| {
            !path.starts_with(STATE_DIR)
                && !path.to_str().is_some_and(|p| left_out.contains(p))
                && !matches!(lines, FileLines::Ranges(r) if r.is_empty())
        });
        ChangedLines::known(files)
    }

    /// Why no line is known to be changed, if none is.
    pub fn unknown_reason(&self) -> Option<Unknown> {
        self.known.as_ref().err().copied()
    }

    /// Whether line `line` (1-based) of `path` (relative to the workspace root) changed.
    pub fn contains(&self, path: &Path, line: usize) -> bool {
        self.known
            .as_ref()
            .is_ok_and(|files| files.get(path).is_some_and(|l| l.contains(line)))
    }

    /// The changed files and their lines, in path order (none when unknown).
    pub fn files(&self) -> impl Iterator<Item = (&Path, &FileLines)> {
        self.known
            .as_ref()
            .into_iter()
            .flat_map(|files| files.iter().map(|(p, l)| (p.as_path(), l)))
    }

    /// Whether the run changed no line that can be quoted (known, and none).
    pub fn is_empty(&self) -> bool {
        self.known.as_ref().is_ok_and(BTreeMap::is_empty)
    }

    /// A short list of where the changed lines are, for messages: `calc.sh line 2; config.json
    /// lines 3-4, 9 (and 2 more files)`, at most `max_files` files; `None` when there are none.
    pub fn where_changed(&self, max_files: usize) -> Option<String> {
        let all: Vec<_> = self.files().collect();
        if all.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = all
            .iter()
            .take(max_files)
            .map(|(path, lines)| format!("{} {}", shown_path(path), describe(lines, 6)))
            .collect();
        if all.len() > max_files {
            parts.push(format!("and {} more file(s)", all.len() - max_files));
        }
        Some(parts.join("; "))
    }
}

/// A path for a message or a prompt: as is, or quoted when it holds a control character (a
/// line break in a file name must not start a line of the judge's request).
pub fn shown_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_control) {
        format!("{text:?}")
    } else {
        text.into_owned()
    }
}

/// `every line (new file)`, `line 2`, `lines 3-4, 9` (at most `max` ranges, then `…`).
pub fn describe(lines: &FileLines, max: usize) -> String {
    match lines {
        FileLines::Whole => "every line (a new file)".to_owned(),
        FileLines::Ranges(ranges) => {
            let single = ranges.len() == 1 && ranges[0].start() == ranges[0].end();
            let mut shown: Vec<String> = ranges
                .iter()
                .take(max)
                .map(|r| {
                    if r.start() == r.end() {
                        r.start().to_string()
                    } else {
                        format!("{}-{}", r.start(), r.end())
                    }
                })
                .collect();
            if ranges.len() > max {
                shown.push("…".to_owned());
            }
            format!(
                "{} {}",
                if single { "line" } else { "lines" },
                shown.join(", ")
            )
        }
    }
}

/// The output without the `[… N bytes cut …]` line a cut tail starts with, and without the
/// line after it, which may be partial.
fn uncut(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("[… ") else {
        return text;
    };
    let Some((marker, rest)) = rest.split_once('\n') else {
        return "";
    };
    if !marker.ends_with(" bytes cut …]") {
        return text;
    }
    rest.split_once('\n').map_or("", |(_, after)| after)
}

/// The new-side line ranges of every file in a `git diff -U0` patch.
///
/// The patch is read by its structure, not by its look: a hunk's content is exactly the number
/// of lines its `@@ -a,b +c,d @@` header announces, so an added line that reads like a header
/// (`+++ b/other.rs`) can never start a file. Before the first `diff --git` line (a cut tail) and
/// in malformed input, nothing is taken.
fn parse_diff(text: &str) -> BTreeMap<PathBuf, FileLines> {
    let mut files: BTreeMap<PathBuf, FileLines> = BTreeMap::new();
    let mut path: Option<PathBuf> = None;
    let mut in_header = false;
    let mut content_left = 0usize;
    let mut started = false;
    // The file is new: its old side is `/dev/null`.
    let mut new_file = false;
    for line in uncut(text).lines() {
        if content_left > 0 {
            match line.as_bytes().first() {
                Some(b'\\') => continue,
                Some(b'+' | b'-' | b' ') => {
                    content_left -= 1;
                    continue;
                }
                // Not the content announced: stop trusting this file.
                _ => {
                    content_left = 0;
                    path = None;
                }
            }
        }
        if line.starts_with("diff --git ") {
            started = true;
            in_header = true;
            path = None;
            new_file = false;
            continue;
        }
        if !started {
            continue;
        }
        if in_header && line.strip_suffix('\t').unwrap_or(line) == "--- /dev/null" {
            new_file = true;
            continue;
        }
        if in_header && let Some(name) = line.strip_prefix("+++ ") {
            path = new_side_path(name);
            continue;
        }
        if let Some(hunk) = line.strip_prefix("@@ ") {
            in_header = false;
            let Some((old_len, new_start, new_len)) = hunk_header(hunk) else {
                path = None;
                continue;
            };
            content_left = old_len + new_len;
            if let Some(p) = &path {
                let entry = files.entry(p.clone()).or_insert_with(|| {
                    if new_file && new_len > 0 {
                        FileLines::Whole
                    } else {
                        FileLines::Ranges(Vec::new())
                    }
                });
                if let (FileLines::Ranges(ranges), true) = (entry, new_len > 0) {
                    ranges.push(new_start..=new_start + new_len - 1);
                }
            }
        }
    }
    files
}

/// `-a,b +c,d @@…` → (b, c, d); a missing count is 1.
fn hunk_header(hunk: &str) -> Option<(usize, usize, usize)> {
    let mut parts = hunk.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let count = |spec: &str| -> Option<(usize, usize)> {
        match spec.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((spec.parse().ok()?, 1)),
        }
    };
    let (_, old_len) = count(old)?;
    let (new_start, new_len) = count(new)?;
    Some((old_len, new_start, new_len))
}

/// The path of a `+++ ` line (`b/src/x.rs`, quoted when unusual, a tab after a name with a
/// space); `None` for `/dev/null` (a deleted file).
fn new_side_path(name: &str) -> Option<PathBuf> {
    let name = name.strip_suffix('\t').unwrap_or(name);
    if name == "/dev/null" {
        return None;
    }
    let name = unquote(name)?;
    name.strip_prefix("b/").map(PathBuf::from)
}

/// A name as git prints it: as is, or in double quotes with C escapes (`\t`, `\"`, `\\`,
/// octal bytes `\303\251`). `None` when the quoting or the bytes are not valid.
pub(crate) fn unquote(name: &str) -> Option<String> {
    let Some(inner) = name.strip_prefix('"') else {
        return Some(name.to_owned());
    };
    let inner = inner.strip_suffix('"')?;
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        let escaped = chars.next()?;
        bytes.push(match escaped {
            b'a' => 0x07,
            b'b' => 0x08,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'r' => b'\r',
            b'"' => b'"',
            b'\\' => b'\\',
            b'0'..=b'7' => {
                let mut value = u32::from(escaped - b'0');
                for _ in 0..2 {
                    let digit = chars.next().filter(|d| (b'0'..=b'7').contains(d))?;
                    value = value * 8 + u32::from(digit - b'0');
                }
                u8::try_from(value).ok()?
            }
            _ => return None,
        });
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
#[path = "changed_tests.rs"]
mod tests;
