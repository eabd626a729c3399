//! The judge's verdict: found in its final message, parsed, and checked against the files.
//!
//! A model's answer is prose around JSON, so the verdict is the **last JSON object** in the final
//! message (fenced in ```` ```json ```` or bare), preferring the last one that has a `verdict`
//! key. Anything that does not parse into the expected shape is no verdict at all — and with
//! the fail-closed policy, no verdict is a reject.
//!
//! An accept must be backed by evidence tether can check mechanically: at least one check, and
//! every check's `quote` must occur in the cited file (read by tether, confined to the workspace,
//! compared after turning CRLF into LF and collapsing runs of white space). One invented or
//! unverifiable quote turns the accept into a reject that names it.

use std::fs;
use std::io::Read as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tether_tools::Workspace as Confined;

/// Files larger than this are not read for a quote check (the check fails).
const MAX_QUOTED_FILE: u64 = 16 * 1024 * 1024;

/// One piece of evidence the judge relied on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// The file, relative to the workspace root.
    #[serde(default)]
    pub path: String,
    /// Text copied exactly from that file.
    #[serde(default)]
    pub quote: String,
    /// What the quote shows.
    #[serde(default)]
    pub observation: String,
}

/// What the judge decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Done.
    Accept,
    /// Not done.
    Reject,
}

/// A parsed verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Accept or reject.
    pub decision: Decision,
    /// The judge's one-sentence summary, when it gave one.
    pub summary: Option<String>,
    /// The evidence it cites.
    pub checks: Vec<Check>,
    /// What it found missing.
    pub missing: Vec<String>,
}

#[derive(Deserialize)]
struct Raw {
    verdict: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    checks: Vec<Check>,
    #[serde(default)]
    missing: Vec<String>,
}

/// The verdict in the judge's final message, or why there is none.
pub fn parse(message: &str) -> Result<Verdict, String> {
    let objects = json_objects(message);
    let Some(value) = objects
        .iter()
        .rev()
        .find(|v| v.get("verdict").is_some())
        .or_else(|| objects.last())
    else {
        return Err("its final message holds no JSON object".to_owned());
    };
    let raw: Raw = serde_json::from_value(value.clone())
        .map_err(|e| format!("its verdict JSON does not have the expected shape: {e}"))?;
    let decision = match raw.verdict.trim().to_ascii_lowercase().as_str() {
        "accept" => Decision::Accept,
        "reject" => Decision::Reject,
        other => {
            return Err(format!(
                "its verdict is `{other}`, not `accept` or `reject`"
            ));
        }
    };
    Ok(Verdict {
        decision,
        summary: raw
            .summary
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
        checks: raw.checks,
        missing: raw
            .missing
            .into_iter()
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .collect(),
    })
}

/// Every top-level JSON object in `text`, in order (an object inside another is part of it).
fn json_objects(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('{') {
        let start = at + offset;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value @ Value::Object(_))) => {
                found.push(value);
                at = start + stream.byte_offset();
            }
            _ => at = start + 1,
        }
    }
    found
}

/// Why an accept is not backed by its checks, one line per problem; empty when every check
/// holds. Quotes are looked up in the files of `ws`.
pub fn unbacked(checks: &[Check], ws: &Confined) -> Vec<String> {
    if checks.is_empty() {
        return vec!["the accept cites no checks; at least one quoted line is required".to_owned()];
    }
    checks
        .iter()
        .filter_map(|check| quote_problem(check, ws))
        .collect()
}

/// What is wrong with one check, if anything.
pub fn quote_problem(check: &Check, ws: &Confined) -> Option<String> {
    let quote = normalize(&check.quote);
    let path = check.path.trim();
    if quote.is_empty() {
        return Some(format!("the check of `{path}` has an empty quote"));
    }
    if path.is_empty() {
        return Some(format!("the quote {} names no file", shown(&check.quote)));
    }
    let text = match read_confined(path, ws) {
        Ok(text) => text,
        Err(why) => {
            return Some(format!(
                "the quote {} cannot be checked: {why}",
                shown(&check.quote)
            ));
        }
    };
    let file = normalize(&text);
    if file.contains(&quote) || file.contains(&normalize(&strip_line_numbers(&check.quote))) {
        None
    } else {
        Some(format!(
            "the quote {} does not occur in `{path}`",
            shown(&check.quote)
        ))
    }
}

fn read_confined(path: &str, ws: &Confined) -> Result<String, String> {
    let real = ws.resolve(path).map_err(|e| e.to_string())?;
    let file = fs::File::open(&real).map_err(|e| format!("`{path}`: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("`{path}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("`{path}` is not a file"));
    }
    if meta.len() > MAX_QUOTED_FILE {
        return Err(format!("`{path}` is too large to check"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_QUOTED_FILE)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("`{path}`: {e}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
#[path = "verdict_tests.rs"]
mod tests;
