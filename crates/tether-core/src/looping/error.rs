//! The one error type of both loops: what stops a loop from running at all (as opposed to how a
//! run ends, which is the loop's `End`).

use tether_plan::file::PlanFileError;
use tether_store::{RunId, RunKind, RunStatus, StoreError};

use crate::run_lock::LockError;

/// The loop could not run. Every variant but [`LoopError::Store`] is the caller's to fix.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another process drives the run.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Another process holds the run's lease (on this machine or another): wait for it to stop,
    /// or for its lease to lapse if it died.
    #[error(
        "run {run} is being driven by another tether process ({holder}); stop it first          (`tether cancel {run}`), or wait for its lease to lapse if that process is gone"
    )]
    Driven {
        /// The run.
        run: RunId,
        /// Who holds it.
        holder: tether_store::Holder,
    },
    /// The plan file could not be read or patched.
    #[error(transparent)]
    Plan(#[from] PlanFileError),
    /// The plan does not parse; fix it first.
    #[error("{0}")]
    PlanInvalid(String),
    /// Nothing to work on.
    #[error(
        "{plan} has no active goal; set `status: active` on the goals to work on{}",
        if open.is_empty() { String::new() } else { format!(" (open: {})", open.join(", ")) }
    )]
    NoActiveGoals {
        /// The plan file.
        plan: String,
        /// The ids of the open goals.
        open: Vec<String>,
    },
    /// Goals a goal run is scoped to that its plan does not have.
    #[error(
        "{plan} has no goal {}; a run can be scoped only to goals of its plan",
        goals.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(", ")
    )]
    ScopeNotInPlan {
        /// The plan file.
        plan: String,
        /// The goals it does not have.
        goals: Vec<String>,
    },
    /// None of the goals a goal run is scoped to is active.
    #[error(
        "none of the goals the run is scoped to ({}) is active in {plan}; set `status: active` on \
         the ones to work on",
        goals.join(", ")
    )]
    ScopeInactive {
        /// The plan file.
        plan: String,
        /// The goals of the scope.
        goals: Vec<String>,
    },
    /// The run is of another kind than the loop resuming it, or its stored spec is damaged.
    #[error("run {run} is not a {} this tether can resume: {detail}", loop_name(*expected))]
    NotThisKind {
        /// The run.
        run: RunId,
        /// The kind of loop that tried to resume it.
        expected: RunKind,
        /// Why.
        detail: String,
    },
    /// The run already ended; there is nothing to resume.
    #[error("run {run} has already ended ({status}); start a new one")]
    Ended {
        /// The run.
        run: RunId,
        /// How it ended.
        status: RunStatus,
    },
}

/// How messages name a loop.
fn loop_name(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Ralph => "Ralph loop",
        RunKind::Goal => "goal loop",
        RunKind::Plan => "plan-mode run",
        RunKind::Ask => "question",
    }
}
