//! The Ralph loop: the same prompt, again and again, each iteration in a fresh context, until the
//! agent keeps its completion promise or the budget runs out.
//!
//! State lives in the workspace files and the store, never in the model's context, so a loop can
//! be paused, cancelled, killed and resumed: each iteration is bracketed by journal events, and
//! a resumed run continues after its last completed iteration. The iteration skeleton is the
//! shared driver's ([`crate::looping`]); this module supplies the prompt (the user's, then any
//! message sent with `tether say` and answers owed after an interruption) and the promise check.

pub mod promise;

use serde::{Deserialize, Serialize};
use tether_store::{Budget, Outcome, RunId, RunKind};
use tokio_util::sync::CancellationToken;

use crate::looping::{self, At, Limits, LoopKind, Next, Prompt, Turn};
use crate::prompts::{self, Feedback};

pub use crate::looping::{Deps, LoopError, Stopped, UsageWaits};

/// The highest `--max-iterations` accepted.
pub const MAX_ITERATIONS_CEILING: u32 = 20_000;

/// A Ralph loop's parameters, stored as the run's spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RalphSpec {
    /// The prompt given each iteration.
    pub prompt: String,
    /// The completion promise; without one the loop runs to its budget.
    pub promise: Option<String>,
    /// The budget; `None` is unlimited (asked for explicitly).
    pub max_iterations: Option<u32>,
    /// The budgets in tokens, dollars and time (its `iterations` is unused: that is
    /// `max_iterations`); unset units are unlimited.
    #[serde(default)]
    pub budget: Budget,
    /// Failed iterations in a row that stop the loop.
    pub max_consecutive_failures: u32,
}

/// How a loop ended (or stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RalphEnd {
    /// The agent kept its promise in iteration `iteration`.
    PromiseKept {
        /// The iteration.
        iteration: u32,
    },
    /// It stopped in a way every loop shares (the budget spent without the promise among them).
    Stopped(Stopped),
}

impl From<Stopped> for RalphEnd {
    fn from(stopped: Stopped) -> Self {
        RalphEnd::Stopped(stopped)
    }
}

/// Starts a new Ralph run and drives it. `on_start` is told the run id before the first
/// iteration (so the caller can print it).
pub async fn start(
    deps: &Deps,
    spec: RalphSpec,
    interrupt: CancellationToken,
    on_start: impl FnOnce(&RunId),
) -> Result<(RunId, RalphEnd), LoopError> {
    let kind = Ralph::new(spec.clone(), Vec::new());
    looping::start(deps, RunKind::Ralph, &spec, kind, interrupt, on_start).await
}

/// Resumes a stopped Ralph run (paused, interrupted, killed, or out of budget — the budget is
/// reset then) and drives it from its last completed iteration. Questions left pending by the
/// interrupted iteration are waited for first — the same questions, not asked again — and their
/// answers go to the next iteration. `on_open` hears its id once the run is held under its lock.
pub async fn resume(
    deps: &Deps,
    run: &RunId,
    by: &str,
    interrupt: CancellationToken,
    on_open: impl FnOnce(&RunId),
) -> Result<RalphEnd, LoopError> {
    let what = (RunKind::Ralph, by);
    looping::resume(deps, run, what, interrupt, on_open, |spec, answers| {
        let owed = if answers.is_empty() {
            Vec::new()
        } else {
            vec![Feedback::Answers(answers)]
        };
        Ok(Ralph::new(spec, owed))
    })
    .await
}

/// The Ralph loop as the driver sees it.
struct Ralph {
    spec: RalphSpec,
    /// The prompt every iteration starts with.
    base: String,
    /// What the next prompt owes after the messages (answers after an interruption).
    owed: Vec<Feedback>,
}

impl Ralph {
    fn new(spec: RalphSpec, owed: Vec<Feedback>) -> Self {
        let base = prompts::ralph(&spec.prompt, spec.promise.as_deref());
        Ralph { spec, base, owed }
    }
}

impl LoopKind for Ralph {
    type End = RalphEnd;

    fn limits(&self) -> Limits {
        Limits {
            max_iterations: self.spec.max_iterations,
            budget: self.spec.budget,
            max_consecutive_failures: self.spec.max_consecutive_failures,
        }
    }

    /// Every iteration of a Ralph loop starts from a fresh context.
    fn prompt(&mut self, _: At<'_>, _: u32, mut owed: Vec<Feedback>) -> Result<Prompt, LoopError> {
        owed.append(&mut self.owed);
        Ok(Prompt::fresh(prompts::ralph_iteration(&self.base, &owed)))
    }

    fn after(&mut self, _: At<'_>, n: u32, turn: Turn<'_>) -> Result<Next<RalphEnd>, LoopError> {
        Ok(match &self.spec.promise {
            Some(p) if promise::is_kept(turn.final_message, p) => {
                Next::Finish(Outcome::Completed, RalphEnd::PromiseKept { iteration: n })
            }
            _ => Next::Continue,
        })
    }
}
