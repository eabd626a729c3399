//! A sign-off's outcome as a person reads it (`tether goal complete`); the agent reads
//! [`SignoffOutcome::tool_text`] instead.

use std::fmt::Write as _;

use crate::{SignoffOutcome, VerifyResult};

/// How many lines of a failing verify's output are shown.
const TAIL_LINES: usize = 20;

/// Appends a line to the text (writing to a `String` cannot fail).
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

impl SignoffOutcome {
    /// The outcome as a person reads it at a terminal: the decision and its reason, verify's
    /// ending (and the tail of its output when it failed a rejected attempt), the judge's
    /// quotes or what is missing. A refusal is the caller's to say (it is an error there).
    pub fn person_text(&self) -> String {
        let mut out = String::new();
        match self {
            SignoffOutcome::Accepted {
                goal_id,
                attempt,
                reason,
                verify,
                judge_model,
                checks,
                transcript,
                ..
            } => {
                say!(
                    out,
                    "accepted: goal {goal_id} is done (attempt {attempt}): {reason}"
                );
                write_verify(&mut out, verify.as_ref(), false);
                match judge_model {
                    Some(model) => {
                        say!(
                            out,
                            "  judge: {model} accepted, {} quote(s) checked{}",
                            checks.len(),
                            transcript_note(transcript.as_deref())
                        );
                        for c in checks {
                            let quote: String =
                                c.quote.split_whitespace().collect::<Vec<_>>().join(" ");
                            say!(out, "    - {}: \"{quote}\" — {}", c.path, c.observation);
                        }
                    }
                    None => say!(out, "  judge: none (--no-judge)"),
                }
            }
            SignoffOutcome::Rejected {
                goal_id,
                attempt,
                reason,
                missing,
                verify,
                judge_model,
                transcript,
                ..
            } => {
                say!(
                    out,
                    "rejected: goal {goal_id} is not done (attempt {attempt}): {reason}"
                );
                write_verify(&mut out, verify.as_ref(), true);
                if let Some(model) = judge_model {
                    say!(
                        out,
                        "  judge: {model}{}",
                        transcript_note(transcript.as_deref())
                    );
                }
                if !missing.is_empty() {
                    say!(out, "  missing:");
                    for m in missing {
                        say!(out, "    - {m}");
                    }
                }
            }
            SignoffOutcome::Refused { .. } => {}
        }
        out
    }
}

/// ` (transcript: …)`, when there is one.
fn transcript_note(path: Option<&str>) -> String {
    path.map_or_else(String::new, |p| format!(" (transcript: {p})"))
}

/// Verify's line of an outcome, with the tail of its output when it failed and
/// `tail_on_failure`.
fn write_verify(out: &mut String, verify: Option<&VerifyResult>, tail_on_failure: bool) {
    let Some(v) = verify else {
        say!(out, "  verify: none");
        return;
    };
    say!(
        out,
        "  verify: `{}` {} in {:.1} s (log: {})",
        v.command,
        v.ending(),
        v.elapsed_ms as f64 / 1000.0,
        v.log_path
    );
    if tail_on_failure && !v.passed() {
        let lines: Vec<&str> = v.tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
            say!(out, "    | {line}");
        }
    }
}
