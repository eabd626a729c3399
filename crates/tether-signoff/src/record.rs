//! Recording a decision: the verdict in the store, then the plan patched to match (status and a
//! `## Log` line).
//!
//! The verdict is stored first: it is the fact (what was checked and decided), and a plan that
//! could not be patched afterwards is reported as [`SignoffError::PlanNotPatched`] with the
//! decision kept. Log lines are stamped `YYYY-MM-DD HH:MM` in UTC and kept short.

use serde_json::Value;
use tether_plan::Status;
use tether_store::{JudgeVote, NewVerdict, Verdict, VerdictKind};

use super::panel::and_list;
use super::verdict::Check;
use super::verify::VerifyResult;
use super::{Signoff, SignoffError, SignoffOutcome};
use tether_plan::file as plan_file;

/// How the recorded reason of a judge failure begins (for people; the record's kind is what
/// programs read).
pub(super) const JUDGE_UNAVAILABLE: &str = "judge unavailable";

/// The longest log line tether appends (in characters, before the stamp).
const MAX_LOG_CHARS: usize = 400;

/// A decision being assembled.
pub(super) struct Decision {
    goal_id: String,
    attempt: u32,
    contract_hash: String,
    pub(super) verify: Option<VerifyResult>,
    pub(super) judge_model: Option<String>,
    pub(super) transcript: Option<String>,
    pub(super) checks: Vec<Check>,
    /// The changed files of the verification surface the judge was told of.
    pub(super) surface: Vec<String>,
}

/// A decision with its verdict.
pub(super) struct Decided {
    pub(super) decision: Decision,
    pub(super) kind: VerdictKind,
    pub(super) reason: String,
    pub(super) missing: Vec<String>,
    /// A panel's votes, in the order its judges were asked (empty for one judge).
    pub(super) votes: Vec<JudgeVote>,
}

impl Decision {
    /// The goal it decides on.
    pub(super) fn goal_id(&self) -> &str {
        &self.goal_id
    }

    /// Which attempt it is.
    pub(super) fn attempt(&self) -> u32 {
        self.attempt
    }

    pub(super) fn new(goal_id: &str, attempt: u32, contract_hash: String) -> Self {
        Decision {
            goal_id: goal_id.to_owned(),
            attempt,
            contract_hash,
            verify: None,
            judge_model: None,
            surface: Vec::new(),
            transcript: None,
            checks: Vec::new(),
        }
    }

    pub(super) fn accept(mut self, reason: String, checks: Vec<Check>) -> Decided {
        self.checks = checks;
        Decided {
            decision: self,
            kind: VerdictKind::Accepted,
            reason,
            missing: Vec::new(),
            votes: Vec::new(),
        }
    }

    /// A reject because the goal's verify command failed (the judge is not asked).
    pub(super) fn verify_failed(self, reason: String, missing: Vec<String>) -> Decided {
        Decided {
            decision: self,
            kind: VerdictKind::VerifyFailed,
            reason,
            missing,
            votes: Vec::new(),
        }
    }
}

impl Signoff {
    /// Stores the verdict, patches the plan, and returns the outcome.
    pub(super) fn record(&self, decided: Decided) -> Result<SignoffOutcome, SignoffError> {
        let Decided {
            decision: d,
            kind,
            reason,
            missing,
            votes,
        } = decided;
        // A panel's log line names the judges asked.
        let by = match votes.as_slice() {
            [] => String::new(),
            some => {
                let models: Vec<&str> = some.iter().map(|v| v.model.as_str()).collect();
                format!(" by judges {}", and_list(&models))
            }
        };
        let verdict = kind.verdict();
        let new = NewVerdict {
            run_id: self.run.clone(),
            goal_id: d.goal_id.clone(),
            plan_path: self.plan_key(),
            attempt: d.attempt,
            verify_exit: d.verify.as_ref().and_then(|v| v.exit_code),
            verdict,
            kind,
            reason: reason.clone(),
            checks: serde_json::to_value(&d.checks).unwrap_or(Value::Null),
            missing: missing.clone(),
            judge_model: d.judge_model.clone(),
            transcript_path: d.transcript.clone(),
            contract_hash: Some(d.contract_hash.clone()),
            judges: votes,
        };
        // A process that no longer drives its run records no verdict for it.
        if let Some(run) = &self.run {
            self.journal.check_fence(run)?;
        }
        self.journal.store().insert_verdict(&new)?;
        // The run's sinks (its notices, the progress line) learn of the verdict now rather
        // than at the loop's next event.
        if let Some(run) = &self.run
            && let Err(e) = self.journal.publish(run)
        {
            tracing::warn!(error = %e, "could not pass the verdict to the run's sinks");
        }
        let id = &d.goal_id;
        if verdict == Verdict::Accept {
            let line = log_line(id, &format!("signed off{by}"), &reason, &[]);
            self.patch_plan(id, Some(Status::Done), &line)
                .map_err(|cause| SignoffError::PlanNotPatched {
                    goal_id: id.clone(),
                    note: "the accept is recorded in the store; set `status: done` by hand",
                    cause,
                })?;
            Ok(SignoffOutcome::Accepted {
                goal_id: d.goal_id,
                attempt: d.attempt,
                reason,
                verify: d.verify,
                judge_model: d.judge_model,
                checks: d.checks,
                surface: d.surface,
                transcript: d.transcript,
            })
        } else {
            let line = log_line(id, &format!("sign-off rejected{by}"), &reason, &missing);
            self.patch_plan(id, None, &line)
                .map_err(|cause| SignoffError::PlanNotPatched {
                    goal_id: id.clone(),
                    note: "the reject is recorded in the store",
                    cause,
                })?;
            Ok(SignoffOutcome::Rejected {
                goal_id: d.goal_id,
                attempt: d.attempt,
                reason,
                missing,
                verify: d.verify,
                judge_model: d.judge_model,
                judge_unavailable: kind == VerdictKind::JudgeUnavailable,
                surface: d.surface,
                transcript: d.transcript,
            })
        }
    }

    /// Sets the status (if asked), then appends the log line; each an atomic patch.
    pub(super) fn patch_plan(
        &self,
        goal_id: &str,
        status: Option<Status>,
        line: &str,
    ) -> Result<(), plan_file::PlanFileError> {
        if let Some(status) = status {
            plan_file::patch(&self.plan, |doc| doc.set_status(goal_id, status))?;
        }
        plan_file::patch(&self.plan, |doc| doc.append_log(line))?;
        Ok(())
    }
}

/// `YYYY-MM-DD HH:MM <id> <what>: <reason>[; missing: a; b]`, shortened.
pub(super) fn log_line(goal_id: &str, what: &str, reason: &str, missing: &[String]) -> String {
    let mut text = format!("{goal_id} {what}: {reason}");
    if !missing.is_empty() {
        text.push_str("; missing: ");
        text.push_str(&missing.join("; "));
    }
    let mut text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > MAX_LOG_CHARS {
        text = text.chars().take(MAX_LOG_CHARS - 1).collect();
        text.push('…');
    }
    format!("{} {text}", stamp(tether_store::now_ms()))
}

/// `YYYY-MM-DD HH:MM` (UTC) for milliseconds since the Unix epoch.
pub fn stamp(ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(at) => at.format("%Y-%m-%d %H:%M").to_string(),
        // Beyond what a calendar date can say (hundreds of millennia away).
        None => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stamps_are_utc_calendar_minutes() {
        assert_eq!(super::stamp(0), "1970-01-01 00:00");
        assert_eq!(super::stamp(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(super::stamp(1_781_532_120_000), "2026-06-15 14:02");
        assert_eq!(super::stamp(4_107_542_399_000), "2100-02-28 23:59");
        assert_eq!(super::stamp(-60_000), "1969-12-31 23:59");
    }

    #[test]
    fn log_lines_are_one_short_line() {
        let long = "x ".repeat(500);
        let line = super::log_line("g", "sign-off rejected", "bad\nreason", &[long]);
        assert!(
            line.contains(" g sign-off rejected: bad reason; missing: x x"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        assert!(line.ends_with('…'));
        assert!(line.chars().count() <= 17 + super::MAX_LOG_CHARS);
    }
}
