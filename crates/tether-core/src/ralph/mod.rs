//! The Ralph loop: the same prompt, again and again, each iteration in a fresh context, until the
//! agent keeps its completion promise or the budget runs out.
//!
//! State lives in the workspace files and the store, never in the model's context, so a loop can
//! be paused, cancelled, killed and resumed: each iteration is bracketed by journal events, and
//! a resumed run continues after its last completed iteration.

pub mod promise;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tether_agent::{ExecError, Executor, TurnRequest};
use tether_store::{Event, Outcome, RunId, RunKind, RunStatus, StoreError};
use tokio_util::sync::CancellationToken;

use crate::looping::{self, Recorder, chain, summary, watch_for_cancel};
use crate::prompts;
use crate::run_lock::LockError;
use tether_config::Workspace;
use tether_human::Desk;
use tether_store::Journal;

/// The highest `--max-iterations` accepted.
pub const MAX_ITERATIONS_CEILING: u32 = 20_000;

/// A Ralph loop's parameters, stored as the run's spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RalphSpec {
    /// The prompt given each iteration.
    pub prompt: String,
    /// The completion promise; without one the loop runs to its budget.
    pub promise: Option<String>,
    /// The budget; `None` is unlimited (asked for explicitly).
    pub max_iterations: Option<u32>,
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
    /// The budget was spent without the promise.
    BudgetSpent {
        /// The last iteration run.
        iteration: u32,
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
    /// `tether pause` stopped it at an iteration boundary.
    Paused,
    /// Ctrl+C stopped it; `tether resume` continues.
    Interrupted,
}

/// The loop could not run.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another process drives the run.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The run's stored spec is not a Ralph spec (it is another kind of run, or damaged).
    #[error("run {run} is not a Ralph loop this tether can resume: {detail}")]
    NotRalph {
        /// The run.
        run: RunId,
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

impl From<looping::Reopen> for LoopError {
    fn from(e: looping::Reopen) -> Self {
        match e {
            looping::Reopen::Store(e) => LoopError::Store(e),
            looping::Reopen::Lock(e) => LoopError::Lock(e),
            looping::Reopen::NotThisKind { run, detail } => LoopError::NotRalph { run, detail },
            looping::Reopen::Ended { run, status } => LoopError::Ended { run, status },
        }
    }
}

/// What a loop needs.
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

/// Starts a new Ralph run and drives it. `on_start` is told the run id before the first
/// iteration (so the caller can print it).
pub async fn start(
    deps: &Deps,
    spec: RalphSpec,
    interrupt: CancellationToken,
    on_start: impl FnOnce(&RunId),
) -> Result<(RunId, RalphEnd), LoopError> {
    let (run, lock) = looping::open_new(&deps.ws, &deps.journal, RunKind::Ralph, &spec)?;
    on_start(&run);
    let end = drive(deps, &run, &spec, interrupt, None).await?;
    drop(lock);
    Ok((run, end))
}

/// Resumes a stopped Ralph run (paused, interrupted, killed, or out of budget — the budget is
/// reset then) and drives it from its last completed iteration.
pub async fn resume(
    deps: &Deps,
    run: &RunId,
    by: &str,
    interrupt: CancellationToken,
) -> Result<RalphEnd, LoopError> {
    let (lock, spec): (_, RalphSpec) =
        looping::reopen(&deps.ws, &deps.journal, run, RunKind::Ralph, by)?;
    // Questions left pending by the interrupted iteration are waited for first — the same
    // questions, not asked again — and their answers go to the next iteration.
    let Some(answers) =
        looping::await_interrupted(&deps.human, &deps.journal, run, &interrupt).await?
    else {
        finish(deps, run, Outcome::Interrupted).await?;
        return Ok(RalphEnd::Interrupted);
    };
    let preface = (!answers.is_empty()).then(|| prompts::answers_after_interruption(&answers));
    let end = drive(deps, run, &spec, interrupt, preface).await?;
    drop(lock);
    Ok(end)
}

async fn finish(deps: &Deps, run: &RunId, outcome: Outcome) -> Result<(), StoreError> {
    looping::finish(&deps.journal, &deps.human, run, outcome).await
}

async fn drive(
    deps: &Deps,
    run: &RunId,
    spec: &RalphSpec,
    interrupt: CancellationToken,
    mut preface: Option<String>,
) -> Result<RalphEnd, LoopError> {
    let base = prompts::ralph(&spec.prompt, spec.promise.as_deref());
    let dir = deps.ws.runs_dir().join(run.to_string());
    loop {
        let state = deps.journal.state(run)?;
        if state.cancel_requested.is_some() {
            finish(deps, run, Outcome::Cancelled).await?;
            return Ok(RalphEnd::Cancelled);
        }
        if let Some(by) = &state.pause_requested {
            let reason = format!("paused by {by}");
            deps.journal.append(run, &Event::Paused { reason })?;
            return Ok(RalphEnd::Paused);
        }
        if interrupt.is_cancelled() {
            finish(deps, run, Outcome::Interrupted).await?;
            return Ok(RalphEnd::Interrupted);
        }
        let n = state.iteration + 1;
        if let Some(max) = spec.max_iterations
            && state.budget_used() >= max
        {
            finish(deps, run, Outcome::BudgetExhausted).await?;
            return Ok(RalphEnd::BudgetSpent {
                iteration: state.iteration,
            });
        }
        deps.journal.append(run, &Event::IterationStarted { n })?;
        let turn_cancel = interrupt.child_token();
        let watcher = tokio::spawn(watch_for_cancel(
            deps.journal.clone(),
            run.clone(),
            turn_cancel.clone(),
        ));
        let prompt = match preface.take() {
            Some(extra) => format!("{base}{extra}"),
            None => base.clone(),
        };
        let request = TurnRequest {
            iteration: n,
            prompt,
            transcript: dir.join(format!("iteration-{n:04}.jsonl")),
        };
        let recorder = Recorder::new(&deps.journal, run, n);
        let result = deps
            .executor
            .run_turn(request, &recorder, turn_cancel.clone())
            .await;
        watcher.abort();
        match result {
            Ok(outcome) => {
                let summary = summary(&outcome.final_message);
                deps.journal
                    .append(run, &Event::IterationCompleted { n, summary })?;
                if let Some(p) = &spec.promise
                    && promise::is_kept(&outcome.final_message, p)
                {
                    finish(deps, run, Outcome::Completed).await?;
                    return Ok(RalphEnd::PromiseKept { iteration: n });
                }
            }
            Err(ExecError::Cancelled) => {
                // The store is the judge of why: a recorded cancel request wins over Ctrl+C.
                if deps.journal.state(run)?.cancel_requested.is_some() {
                    finish(deps, run, Outcome::Cancelled).await?;
                    return Ok(RalphEnd::Cancelled);
                }
                finish(deps, run, Outcome::Interrupted).await?;
                return Ok(RalphEnd::Interrupted);
            }
            Err(e) => {
                let error = chain(&e);
                deps.journal.append(
                    run,
                    &Event::IterationFailed {
                        n,
                        error: error.clone(),
                    },
                )?;
                let failures = deps.journal.state(run)?.consecutive_failures;
                if failures >= spec.max_consecutive_failures {
                    finish(deps, run, Outcome::Failed).await?;
                    return Ok(RalphEnd::Failed {
                        iteration: n,
                        error,
                    });
                }
            }
        }
    }
}
