//! The quote check: what makes a judge's accept evidence rather than a claim.
//!
//! A judge that accepts must cite at least one check, and tether verifies every check itself.
//! A quote counts only when it is **one or more whole lines** of a **regular text file of the
//! project**: compared after turning CRLF into LF and collapsing every run of white space
//! (line breaks included) into one space, the quote must equal a run of consecutive non-blank
//! lines of the file, from the start of the first to the end of the last. So a fragment (`")"`,
//! half a line) proves nothing, and neither does a quote with almost no substance: at least
//! [`MIN_SUBSTANCE`] letters or digits are required.
//!
//! Some files can never back a sign-off, whatever they hold: tether's own state (`.tether/`:
//! the store, transcripts — including the judge's own, written before the check — and logs),
//! git's internals (any `.git/`), and the plan file (it holds the contract itself). Files are read
//! bounded: only regular files (a FIFO or device is refused without opening it for a blocking
//! read), at most [`MAX_QUOTED_FILE`] bytes, and not binary (a NUL byte or invalid UTF-8).

use std::fs;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use tether_tools::Workspace as Confined;

use crate::verdict::Check;

/// Files larger than this are not read for a quote check (the check fails).
pub const MAX_QUOTED_FILE: u64 = 16 * 1024 * 1024;

/// The fewest letters and digits a quote must hold.
pub const MIN_SUBSTANCE: usize = 8;

/// Checks a verdict's quotes against the files of one workspace.
pub struct Quotes<'a> {
    ws: &'a Confined,
    plan: Option<PathBuf>,
}

impl<'a> Quotes<'a> {
    /// Quotes are looked up in `ws`; `plan` is the plan file, which can never back a sign-off.
    pub fn new(ws: &'a Confined, plan: &Path) -> Self {
        Quotes {
            ws,
            plan: fs::canonicalize(plan).ok(),
        }
    }

    /// Why an accept is not backed by its checks, one line per problem; empty when every check
    /// holds.
    pub fn unbacked(&self, checks: &[Check]) -> Vec<String> {
        if checks.is_empty() {
            return vec![
                "the accept cites no checks; at least one quoted line is required".to_owned(),
            ];
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
    pub fn problem(&self, check: &Check) -> Option<String> {
        self.locate(check).err()
    }

    /// The 1-based line the check's quote starts on in its file, or what is wrong with it.
    fn locate(&self, check: &Check) -> Result<usize, String> {
        let path = check.path.trim();
        let quote = normalize(&check.quote);
        if quote.is_empty() {
            return Err(format!("the check of `{path}` has an empty quote"));
        }
        if path.is_empty() {
            return Err(format!("the quote {} names no file", shown(&check.quote)));
        }
        let substance = quote.chars().filter(|c| c.is_alphanumeric()).count();
        if substance < MIN_SUBSTANCE {
            return Err(format!(
                "the quote {} is too slight to prove anything (it needs at least {MIN_SUBSTANCE} \
                 letters or digits); quote whole lines that show the work",
                shown(&check.quote)
            ));
        }
        let text = match self.read(path) {
            Ok(text) => text,
            Err(why) => {
                return Err(format!(
                    "the quote {} cannot be checked: {why}",
                    shown(&check.quote)
                ));
            }
        };
        let numbered: Vec<(usize, String)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, normalize(l)))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        let lines: Vec<String> = numbered.iter().map(|(_, l)| l.clone()).collect();
        let stripped = normalize(&strip_line_numbers(&check.quote));
        whole_lines(&lines, &quote)
            .or_else(|| whole_lines(&lines, &stripped))
            .and_then(|i| numbered.get(i).map(|(n, _)| *n))
            .ok_or_else(|| {
                format!(
                    "the quote {} is not a run of whole lines of `{path}`",
                    shown(&check.quote)
                )
            })
    }

    /// The text of a file a quote may cite, or why it may not be cited.
    fn read(&self, path: &str) -> Result<String, String> {
        let real = self.ws.resolve(path).map_err(|e| e.to_string())?;
        if let Some(why) = self.off_limits(&real) {
            return Err(format!("`{path}` is {why}, which cannot back a sign-off"));
        }
        read_text(&real).map_err(|why| format!("`{path}` {why}"))
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
fn read_text(real: &Path) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let meta = fs::metadata(real).map_err(|e| format!(": {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file".to_owned());
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(real)
        .map_err(|e| format!(": {e}"))?;
    let meta = file.metadata().map_err(|e| format!(": {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file".to_owned());
    }
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

/// Where `quote` (normalized) equals some run of consecutive `lines` (each normalized, blank
/// ones left out) joined by single spaces: the index of the run's first line.
fn whole_lines(lines: &[String], quote: &str) -> Option<usize> {
    if quote.is_empty() {
        return None;
    }
    (0..lines.len()).find(|&start| {
        let mut joined = String::new();
        for line in &lines[start..] {
            if !joined.is_empty() {
                joined.push(' ');
            }
            joined.push_str(line);
            if joined.len() >= quote.len() {
                return joined == quote;
            }
            if !quote.starts_with(joined.as_str()) {
                return false;
            }
        }
        false
    })
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
