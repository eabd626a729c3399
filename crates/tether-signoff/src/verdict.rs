//! The judge's verdict: found in its final message, parsed, and checked against the files.
//!
//! A model's answer is prose around JSON, so the verdict is the **last JSON object** in the final
//! message (fenced in ```` ```json ```` or bare), preferring the last one that has a `verdict`
//! key. Anything that does not parse into the expected shape is no verdict at all — and with
//! the fail-closed policy, no verdict is a reject.
//!
//! An accept must be backed by evidence tether checks mechanically ([`crate::quotes`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Where tether found the quote: the 1-based line it starts on, set by the quote check
    /// of an accept (never read from the judge's answer).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// What the judge decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Done.
    Accept,
    /// Not done.
    Reject,
    /// It cannot be done as the contract states it: a person must change or cancel the goal.
    Impossible,
    /// It cannot be done without something only a person can give (a key, a decision, an
    /// access).
    Blocked,
}

/// A parsed verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Accept, reject, impossible or blocked.
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
        "impossible" => Decision::Impossible,
        "blocked" => Decision::Blocked,
        other => {
            return Err(format!(
                "its verdict is `{other}`, not `accept`, `reject`, `impossible` or `blocked`"
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

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
