//! The quote check: what makes a judge's accept evidence rather than a claim.
//!
//! A judge that accepts must cite at least one check, and tether verifies every check itself.
//!
//! **Whole lines of a project file.** A quote counts only when it is one or more whole lines of
//! a regular text file of the project: compared after turning CRLF into LF and collapsing every
//! run of white space (line breaks included) into one space, the quote must equal a run of
//! consecutive non-blank lines of the file, from the start of the first to the end of the last
//! (the `   12\t` prefixes the `read` tool shows may be copied along). So a fragment (`")"`,
//! half a line) proves nothing. Some files can never back a sign-off, whatever they hold:
//! tether's own state (`.tether/`: the store, transcripts — including the judge's own, written
//! before the check — and logs), git's internals (any `.git/`), and the plan file (it holds the
//! contract itself). Files are read bounded: only regular files (a FIFO or device is refused
//! without opening it for a blocking read), at most [`MAX_QUOTED_FILE`] bytes, and not binary (a
//! NUL byte or invalid UTF-8).
//!
//! **Evidence, not letters.** Beyond that, what counts is whether the quoted lines show *this*
//! work. A quote counts when at least one of its lines is
//!
//! - a line **this run changed** (see [`crate::changed`]: added or modified since the run began,
//!   or in a file new since then) that holds at least one letter or digit — the fix itself is the best
//!   evidence however short: `22` in `.nvmrc`, `"port": 80,`, `CC = clang`, `a + b` as a
//!   function's body, `echo $(($1 + $2))`; or
//! - a line the run did not change that is **specific**: judged by what it is, not by counting
//!   letters ([`crate::specific`]) — it states something, however short (`timeout = 30`,
//!   `return a - b`, `USER app`, `echo $(($1 + $2))`, `assert add(2, 3) == 5`), and is not
//!   only punctuation (`}`, `---`), only keywords and bare values (`fi`, `end`, `done`,
//!   `} else {`, `return true;`), a lone name (`return x`, `raise NotImplementedError`), a
//!   section header or a key with no value (`[package]`, `jobs:`), an import (`import os`,
//!   `use std::fmt;`, `#include <stdio.h>`), a license, copyright or SPDX line, a shebang, a
//!   standard preamble (`set -e`, `"use strict";`) or any line of a `LICENSE` file; and it is
//!   not **common**: the same line is not a whole line of [`COMMON_FILES`] or more other files
//!   of the repository ([`crate::common`]: `logger = logging.getLogger(__name__)` in every
//!   module). A goal met before the run began is thus signed off on the line that proves it.
//!
//! So a multi-line quote of unchanged lines counts when one of them is specific (a function's
//! signature with its closing `}`), and a quote spanning a changed line with a letter counts
//! whatever else it spans. When a quote matches several places of its file, it counts if one
//! of them does. A changed line without a letter or digit (`}` added) does not count on its
//! own.
//!
//! Without a snapshot of the workspace as the run began (a run an older tether began, a
//! snapshot that failed, git failing) no line is known to be changed: every quote must then be
//! specific. A quote that does not count
//! is named with the reason and what to quote instead — the lines this run changed.

use std::fs;
use std::io::Read as _;
use std::ops::RangeInclusive;
use std::path::{Component, Path, PathBuf};

use tether_tools::Workspace as Confined;

use crate::changed::{ChangedLines, Unknown};
use crate::common::{COMMON_FILES, Peers};
use crate::specific::{Weakness, holds_letters, weakness};
use crate::verdict::Check;

/// Files larger than this are not read for a quote check (the check fails).
pub const MAX_QUOTED_FILE: u64 = 16 * 1024 * 1024;

/// The places of a file a quote matches that are weighed at most.
const MAX_PLACES: usize = 50;

/// How many changed files the advice of a message names.
const ADVICE_FILES: usize = 5;

/// Why a check does not back an accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuoteProblem {
    /// The accept cites no check at all.
    NoChecks,
    /// The workspace itself cannot be read.
    NoWorkspace {
        /// Why.
        why: String,
    },
    /// The check's quote is empty.
    EmptyQuote {
        /// The file it names.
        path: String,
    },
    /// The check names no file.
    NoPath {
        /// The quote.
        quote: String,
    },
    /// The file cannot back a sign-off, or cannot be read.
    Unreadable {
        /// The quote.
        quote: String,
        /// Why (naming the file).
        why: String,
    },
    /// The quote is not a run of whole lines of the file.
    NotWholeLines {
        /// The quote.
        quote: String,
        /// The file.
        path: String,
    },
    /// The quote is whole lines of the file, but none of them shows this work.
    NotSpecific {
        /// The quote.
        quote: String,
        /// The file.
        path: String,
        /// Why not, at the first place it matches.
        why: Box<Unconvincing>,
        /// What the run changed: what to quote instead.
        changed: WhereChanged,
    },
}

/// Why quoted whole lines show nothing of this work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconvincing {
    /// The file's lines the quote spans (1-based).
    pub lines: RangeInclusive<usize>,
    /// Whether some of them are changed lines, none of which holds a letter or digit.
    pub changed_without_letters: bool,
    /// The line the run did not change that came nearest to counting, and why it is not
    /// specific; `None` when every quoted line is a changed line.
    pub unchanged: Option<(usize, Weakness)>,
}

/// Where the lines this run changed are, for the advice of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WhereChanged {
    /// No line is known to be changed, for this reason.
    Unknown(Unknown),
    /// The run changed no line that can be quoted.
    Nowhere,
    /// In these files and lines (`calc.sh line 2; config.json lines 3-4`).
    In(String),
}

impl std::fmt::Display for QuoteProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuoteProblem::NoChecks => {
                f.write_str("the accept cites no checks; at least one quoted line is required")
            }
            QuoteProblem::NoWorkspace { why } => {
                write!(f, "the quotes could not be checked: {why}")
            }
            QuoteProblem::EmptyQuote { path } => {
                write!(f, "the check of `{path}` has an empty quote")
            }
            QuoteProblem::NoPath { quote } => {
                write!(f, "the quote {} names no file", shown(quote))
            }
            QuoteProblem::Unreadable { quote, why } => {
                write!(f, "the quote {} cannot be checked: {why}", shown(quote))
            }
            QuoteProblem::NotWholeLines { quote, path } => write!(
                f,
                "the quote {} is not a run of whole lines of `{path}`",
                shown(quote)
            ),
            QuoteProblem::NotSpecific {
                quote,
                path,
                why,
                changed,
            } => {
                write!(f, "the quote {} of `{path}` does not count: ", shown(quote))?;
                reason(f, why, changed)?;
                f.write_str("; ")?;
                advice(f, changed)
            }
        }
    }
}

/// Why the quoted lines do not count.
fn reason(
    f: &mut std::fmt::Formatter<'_>,
    why: &Unconvincing,
    changed: &WhereChanged,
) -> std::fmt::Result {
    let Some((line, weakness)) = &why.unchanged else {
        return f.write_str("the lines this run changed that it quotes hold no letter or digit");
    };
    if let WhereChanged::Unknown(unknown) = changed {
        return write!(
            f,
            "no line is known to be changed ({unknown}), so a quote must be specific, and line \
             {line} is not: {weakness}"
        );
    }
    if why.changed_without_letters {
        return write!(
            f,
            "its changed lines hold no letter or digit, and line {line}, which this run did not \
             change, is not specific: {weakness}"
        );
    }
    if why.lines.start() == why.lines.end() {
        write!(f, "line {line} was not changed by this run, and {weakness}")
    } else {
        write!(
            f,
            "lines {}-{} were not changed by this run, and none is specific (line {line}: \
             {weakness})",
            why.lines.start(),
            why.lines.end()
        )
    }
}

/// What to quote instead.
fn advice(f: &mut std::fmt::Formatter<'_>, changed: &WhereChanged) -> std::fmt::Result {
    let specific = format!(
        "a line specific to this work: one that states something, however short \
         (`timeout = 30`, `return a - b`) — not a bare keyword, lone name, header, import or \
         license line — and not found in {COMMON_FILES} or more other files"
    );
    match changed {
        WhereChanged::In(places) => write!(
            f,
            "quote the lines this run changed ({places}) — a changed line counts however short \
             — or {specific}"
        ),
        WhereChanged::Nowhere => write!(
            f,
            "this run changed no line since it began, so quote {specific}"
        ),
        WhereChanged::Unknown(_) => write!(f, "quote {specific}"),
    }
}

/// Checks a verdict's quotes against the files of one workspace.
pub struct Quotes<'a> {
    ws: &'a Confined,
    plan: Option<PathBuf>,
    changed: &'a ChangedLines,
    peers: Peers<'a>,
}

impl<'a> Quotes<'a> {
    /// Quotes are looked up in `ws`; `plan` is the plan file, which can never back a sign-off;
    /// `changed` are the lines this run changed. Lines common to many files are looked for in
    /// the workspace's files (see [`Quotes::with_tracked`]).
    pub fn new(ws: &'a Confined, plan: &Path, changed: &'a ChangedLines) -> Self {
        Quotes {
            ws,
            plan: fs::canonicalize(plan).ok(),
            changed,
            peers: Peers::new(ws, None),
        }
    }

    /// Looks for lines common to many files in the repository's tracked files (relative to the
    /// workspace root) rather than in a walk of the workspace.
    #[must_use]
    pub fn with_tracked(mut self, tracked: Option<Vec<PathBuf>>) -> Self {
        self.peers = Peers::new(self.ws, tracked);
        self
    }

    /// Why an accept is not backed by its checks, one line per problem; empty when every check
    /// holds.
    pub fn unbacked(&self, checks: &[Check]) -> Vec<String> {
        self.problems(checks)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Why an accept is not backed by its checks; empty when every check holds.
    pub fn problems(&self, checks: &[Check]) -> Vec<QuoteProblem> {
        if checks.is_empty() {
            return vec![QuoteProblem::NoChecks];
        }
        checks.iter().filter_map(|c| self.problem(c)).collect()
    }

    /// Records in each check the line its quote starts on (for checks that hold).
    pub fn locate_all(&self, checks: &mut [Check]) {
        for check in checks {
            check.line = self.locate(check).ok();
        }
    }

    /// What is wrong with one check, if anything.
    pub fn problem(&self, check: &Check) -> Option<QuoteProblem> {
        self.locate(check).err()
    }

    /// The 1-based line the check's quote starts on in its file (at the first place where it
    /// counts), or what is wrong with it.
    fn locate(&self, check: &Check) -> Result<usize, QuoteProblem> {
        let path = check.path.trim();
        let quote = normalize(&check.quote);
        if quote.is_empty() {
            return Err(QuoteProblem::EmptyQuote {
                path: path.to_owned(),
            });
        }
        if path.is_empty() {
            return Err(QuoteProblem::NoPath {
                quote: check.quote.clone(),
            });
        }
        let (real, text) = self.read(path).map_err(|why| QuoteProblem::Unreadable {
            quote: check.quote.clone(),
            why,
        })?;
        let rel = real.strip_prefix(self.ws.root()).unwrap_or(&real);
        let numbered: Vec<(usize, String)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, normalize(l)))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        let lines: Vec<&str> = numbered.iter().map(|(_, l)| l.as_str()).collect();
        let stripped = normalize(&strip_line_numbers(&check.quote));
        let mut places = whole_lines(&lines, &quote);
        if stripped != quote {
            places.extend(whole_lines(&lines, &stripped));
        }
        let mut first_problem = None;
        for place in places.iter().take(MAX_PLACES) {
            let run = &numbered[place.clone()];
            match self.convincing(rel, run) {
                Ok(()) => return Ok(run[0].0),
                Err(why) => {
                    first_problem.get_or_insert(why);
                }
            }
        }
        match first_problem {
            None => Err(QuoteProblem::NotWholeLines {
                quote: check.quote.clone(),
                path: path.to_owned(),
            }),
            Some(why) => Err(QuoteProblem::NotSpecific {
                quote: check.quote.clone(),
                path: path.to_owned(),
                why: Box::new(why),
                changed: self.where_changed(),
            }),
        }
    }

    /// Whether the quoted lines `run` (numbered, normalized) of the file `rel` show this work.
    fn convincing(&self, rel: &Path, run: &[(usize, String)]) -> Result<(), Unconvincing> {
        let mut changed_without_letters = false;
        let mut candidates: Vec<(usize, &str)> = Vec::new();
        let mut nearest: Option<(usize, Weakness)> = None;
        let mut note = |line: usize, why: Weakness| {
            if nearest.is_none_or(|(_, w)| why.nearness() > w.nearness()) {
                nearest = Some((line, why));
            }
        };
        for (n, line) in run {
            if self.changed.contains(rel, *n) {
                if holds_letters(line) {
                    return Ok(());
                }
                changed_without_letters = true;
                continue;
            }
            match weakness(rel, line) {
                None => candidates.push((*n, line)),
                Some(why) => note(*n, why),
            }
        }
        if !candidates.is_empty() {
            let texts: Vec<&str> = candidates.iter().map(|(_, l)| *l).collect();
            let counts = self.peers.counts(rel, &texts);
            for ((n, _), files) in candidates.iter().zip(counts) {
                if files < COMMON_FILES {
                    return Ok(());
                }
                note(*n, Weakness::Common { files });
            }
        }
        let first = run.first().map_or(0, |(n, _)| *n);
        let last = run.last().map_or(first, |(n, _)| *n);
        Err(Unconvincing {
            lines: first..=last,
            changed_without_letters,
            unchanged: nearest,
        })
    }

    fn where_changed(&self) -> WhereChanged {
        if let Some(unknown) = self.changed.unknown_reason() {
            return WhereChanged::Unknown(unknown);
        }
        self.changed
            .where_changed(ADVICE_FILES)
            .map_or(WhereChanged::Nowhere, WhereChanged::In)
    }

    /// The real path and text of a file a quote may cite, or why it may not be cited.
    fn read(&self, path: &str) -> Result<(PathBuf, String), String> {
        let real = self.ws.resolve(path).map_err(|e| e.to_string())?;
        if let Some(why) = self.off_limits(&real) {
            return Err(format!("`{path}` is {why}, which cannot back a sign-off"));
        }
        let text = read_text(self.ws, &real).map_err(|why| format!("`{path}` {why}"))?;
        Ok((real, text))
    }

    /// Why a resolved path can never back a sign-off, if it cannot.
    fn off_limits(&self, real: &Path) -> Option<&'static str> {
        if self.plan.as_deref() == Some(real) {
            return Some("the plan file");
        }
        let rel = real.strip_prefix(self.ws.root()).ok()?;
        let mut parts = rel.components().filter_map(|c| match c {
            Component::Normal(p) => p.to_str(),
            _ => None,
        });
        if parts.next() == Some(".tether") {
            return Some("tether's own state (.tether/)");
        }
        rel.components()
            .any(|c| c.as_os_str() == ".git")
            .then_some("git's internals (.git/)")
    }
}

/// Reads a regular text file, bounded in size, without ever blocking on a FIFO or device.
fn read_text(ws: &Confined, real: &Path) -> Result<String, String> {
    let file = open_regular(ws, real)?;
    let meta = file.metadata().map_err(|e| format!(": {e}"))?;
    if meta.len() > MAX_QUOTED_FILE {
        return Err("is too large to check".to_owned());
    }
    let mut bytes = Vec::new();
    file.take(MAX_QUOTED_FILE)
        .read_to_end(&mut bytes)
        .map_err(|e| format!(": {e}"))?;
    if bytes.contains(&0) {
        return Err("is a binary file".to_owned());
    }
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())
}

/// Opens for reading a regular file of `ws` at `real` (a path `ws` resolved): by descriptor
/// beneath the workspace with no symlink followed (a path the agent swaps after the check fails
/// to open), and never blocking on a FIFO or device.
pub(crate) fn open_regular(ws: &Confined, real: &Path) -> Result<fs::File, String> {
    ws.open_read(real).map_err(|e| match e {
        tether_tools::OpenError::NotRegular(_) => "is not a regular file".to_owned(),
        other => format!(": {other}"),
    })
}

/// Every place where `quote` (normalized) equals a run of consecutive `lines` (each normalized,
/// blank ones left out) joined by single spaces: the run's indices, first to last.
fn whole_lines(lines: &[&str], quote: &str) -> Vec<RangeInclusive<usize>> {
    if quote.is_empty() {
        return Vec::new();
    }
    (0..lines.len())
        .filter_map(|start| {
            let mut joined = String::new();
            for (offset, line) in lines[start..].iter().enumerate() {
                if !joined.is_empty() {
                    joined.push(' ');
                }
                joined.push_str(line);
                if joined.len() >= quote.len() {
                    return (joined == quote).then_some(start..=start + offset);
                }
                if !quote.starts_with(joined.as_str()) {
                    return None;
                }
            }
            None
        })
        .collect()
}

/// CRLF to LF, then every run of white space to one space, trimmed.
pub fn normalize(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The quote without the `   12\t` line-number prefixes the `read` tool shows, in case the judge
/// copied them along.
fn strip_line_numbers(quote: &str) -> String {
    quote
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
            match trimmed[digits..].strip_prefix('\t') {
                Some(rest) if digits > 0 => rest,
                _ => line,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The quote for a message: quoted, on one line, shortened.
fn shown(quote: &str) -> String {
    let one_line = normalize(quote);
    let mut s: String = one_line.chars().take(120).collect();
    if one_line.chars().count() > 120 {
        s.push('…');
    }
    format!("\"{s}\"")
}

#[cfg(test)]
#[path = "quotes_tests.rs"]
mod tests;
