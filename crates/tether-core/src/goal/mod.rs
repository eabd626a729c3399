//! The goal loop (`tether run`): iterations toward the plan's active goals until every one is
//! signed off by the completion check, the budget runs out, or a rule stops the run.
//!
//! Each iteration gets a fresh context: the prompt is the framing, the plan injection and the
//! feedback owed (see [`crate::prompts::goal`]). After it, the loop looks at what the iteration
//! did (tool calls, file and plan changes, sign-off attempts in the store) and lets the
//! [`rules`] decide. Like the Ralph loop, every step is a journal event, so a run can be paused,
//! cancelled, killed and resumed; the plan and the store, not the model's memory, say where the
//! work stands.

pub mod observe;
pub mod rules;
mod run;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tether_agent::Executor;
use tether_store::{RunId, RunStatus, StoreError};

use crate::run_lock::LockError;
use tether_config::Workspace;
use tether_human::Desk;
use tether_plan::file::PlanFileError;
use tether_store::Journal;

pub use rules::RuleSettings;
pub use run::{resume, start};

/// A goal loop's parameters, stored as the run's spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalSpec {
    /// The plan file, relative to the workspace root.
    pub plan: String,
    /// The budget; `None` is unlimited (asked for explicitly).
    pub max_iterations: Option<u32>,
    /// The interaction threshold (0–5) the prompt announces.
    pub threshold: u8,
    /// Sign-off by verify alone (`--no-judge`).
    pub no_judge: bool,
    /// The rules.
    pub rules: RuleSettings,
    /// Failed iterations (agent errors) in a row that stop the run.
    pub max_consecutive_failures: u32,
}

/// How a goal loop ended (or stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalEnd {
    /// Every goal of the run was signed off (or cancelled).
    AllDone {
        /// The last iteration run (0 if none was needed).
        iteration: u32,
        /// The goals signed off during the run.
        signed_off: Vec<String>,
    },
    /// The budget was spent.
    BudgetSpent {
        /// The last iteration run.
        iteration: u32,
    },
    /// A rule blocked the run (the spin guard).
    Blocked {
        /// The rule.
        rule: String,
        /// Why.
        reason: String,
    },
    /// A rule or `tether pause` paused the run.
    Paused {
        /// Why.
        reason: String,
    },
    /// Too many iterations failed in a row.
    Failed {
        /// The last iteration run.
        iteration: u32,
        /// The last error.
        error: String,
    },
    /// `tether cancel` stopped it.
    Cancelled,
    /// Ctrl+C stopped it; `tether resume` continues.
    Interrupted,
}

/// The loop could not run.
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another process drives the run.
    #[error(transparent)]
    Lock(#[from] LockError),
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
    /// The run is not a goal loop (or its spec is damaged).
    #[error("run {run} is not a goal loop this tether can resume: {detail}")]
    NotGoalRun {
        /// The run.
        run: RunId,
        /// Why.
        detail: String,
    },
    /// The run already ended.
    #[error("run {run} has already ended ({status}); start a new one")]
    Ended {
        /// The run.
        run: RunId,
        /// How it ended.
        status: RunStatus,
    },
}

impl From<crate::looping::Reopen> for GoalError {
    fn from(e: crate::looping::Reopen) -> Self {
        use crate::looping::Reopen;
        match e {
            Reopen::Store(e) => GoalError::Store(e),
            Reopen::Lock(e) => GoalError::Lock(e),
            Reopen::NotThisKind { run, detail } => GoalError::NotGoalRun { run, detail },
            Reopen::Ended { run, status } => GoalError::Ended { run, status },
        }
    }
}

/// What a goal loop needs.
#[derive(Clone)]
pub struct Deps {
    /// The workspace.
    pub ws: Workspace,
    /// The store, with sinks.
    pub journal: Journal,
    /// Who does the work.
    pub executor: Arc<dyn Executor>,
    /// The human side: waits for questions a killed run left pending, hears that a run ended.
    pub human: Desk,
}

impl Deps {
    fn plan_path(&self, spec: &GoalSpec) -> PathBuf {
        self.ws.root().join(&spec.plan)
    }
}
