//! What a sign-off attempt (or a cancel) ends in, for the agent, the loop and the CLI.
//!
//! An outcome is data: the loop reads `judge_unavailable` and the verify hash, the CLI prints it
//! or its JSON, and the agent reads [`SignoffOutcome::tool_text`] (worded in
//! [`crate::prompts`]).

use serde::Serialize;

use super::verdict::Check;
use super::verify::VerifyResult;
use crate::prompts;

/// How `complete_goal` ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SignoffOutcome {
    /// The goal is done: its status was patched and a log line appended; the verdict is
    /// recorded.
    Accepted {
        /// The goal.
        goal_id: String,
        /// Which attempt this was (from 1).
        attempt: u32,
        /// Why (the judge's summary, or that verify alone signed it off).
        reason: String,
        /// The verify result, when the goal has a verify command.
        verify: Option<VerifyResult>,
        /// The judge's model; `None` when signed off without a judge (`--no-judge`).
        judge_model: Option<String>,
        /// The judge's checks, every quote verified against its file.
        checks: Vec<Check>,
        /// The changed files of the verification surface the judge was told of.
        surface: Vec<String>,
        /// The judge's transcript, relative to the workspace root.
        transcript: Option<String>,
    },
    /// The goal is not done; it stays as it was, with a log line naming what is missing. The
    /// verdict is recorded.
    Rejected {
        /// The goal.
        goal_id: String,
        /// Which attempt this was (from 1).
        attempt: u32,
        /// Why (`verify failed: …`, the judge's summary, `judge unavailable: …`).
        reason: String,
        /// What is missing for the goal to be done.
        missing: Vec<String>,
        /// The verify result, when the goal has a verify command.
        verify: Option<VerifyResult>,
        /// The judge's model, when a judge was asked.
        judge_model: Option<String>,
        /// Whether the judge failed (error, timeout, no parsable verdict) rather than judged:
        /// the loop pauses for a human after a few of these in a row.
        judge_unavailable: bool,
        /// The changed files of the verification surface the judge was told of.
        surface: Vec<String>,
        /// The judge's transcript, relative to the workspace root, when a judge was asked.
        transcript: Option<String>,
    },
    /// Nothing was checked or recorded: the request cannot be served as it stands (unknown
    /// goal, goal not open or active, plan with errors, contract not approved or changed,
    /// nothing to check).
    Refused {
        /// The goal id asked for.
        goal_id: String,
        /// Why, and what to do about it.
        reason: String,
    },
}

impl SignoffOutcome {
    /// The goal id the attempt was about.
    pub fn goal_id(&self) -> &str {
        match self {
            SignoffOutcome::Accepted { goal_id, .. }
            | SignoffOutcome::Rejected { goal_id, .. }
            | SignoffOutcome::Refused { goal_id, .. } => goal_id,
        }
    }

    /// Whether the goal was signed off.
    pub fn is_accepted(&self) -> bool {
        matches!(self, SignoffOutcome::Accepted { .. })
    }

    /// Whether this was a reject because the judge failed (not because of the work).
    pub fn judge_unavailable(&self) -> bool {
        matches!(
            self,
            SignoffOutcome::Rejected {
                judge_unavailable: true,
                ..
            }
        )
    }

    /// The verify result, if verify ran.
    pub fn verify(&self) -> Option<&VerifyResult> {
        match self {
            SignoffOutcome::Accepted { verify, .. } | SignoffOutcome::Rejected { verify, .. } => {
                verify.as_ref()
            }
            SignoffOutcome::Refused { .. } => None,
        }
    }

    /// The reason, whatever the outcome.
    pub fn reason(&self) -> &str {
        match self {
            SignoffOutcome::Accepted { reason, .. }
            | SignoffOutcome::Rejected { reason, .. }
            | SignoffOutcome::Refused { reason, .. } => reason,
        }
    }

    /// What the agent reads as the `complete_goal` tool's result.
    pub fn tool_text(&self) -> String {
        prompts::signoff_result(self)
    }
}

/// How `cancel_goal` ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CancelOutcome {
    /// The goal's status is now `cancelled`, with a log line giving the reason; the store
    /// records who cancelled it.
    Cancelled {
        /// The goal.
        goal_id: String,
        /// Why.
        reason: String,
        /// A person cancelled it (or confirmed the agent's cancel); otherwise the agent did, and
        /// a person must still confirm it.
        by_person: bool,
    },
    /// Nothing changed (unknown goal, goal not open or active, plan with errors, no reason).
    Refused {
        /// The goal id asked for.
        goal_id: String,
        /// Why, and what to do about it.
        reason: String,
    },
}

impl CancelOutcome {
    /// What the agent reads as the `cancel_goal` tool's result.
    pub fn tool_text(&self) -> String {
        prompts::cancel_result(self)
    }
}
