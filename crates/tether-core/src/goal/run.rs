//! Starting and resuming a goal run: the checks before a run is created, and what a resumed run
//! owes its first prompt. The iterations themselves are the shared driver's, with [`GoalLoop`]
//! supplying the goal loop's steps.

use std::path::Path;

use tether_plan::PlanDoc;
use tether_store::{RunId, RunKind};
use tokio_util::sync::CancellationToken;

use super::cycle::GoalLoop;
use super::verdicts::owed_before_stop;
use super::{Deps, GoalEnd, GoalSpec, LoopError};
use crate::looping;
use crate::prompts::Feedback;
use tether_plan::file as plan_file;

/// Refuses a new goal run whose plan (under `root`) is invalid or has no active goal (of the
/// run's scope, every goal of which must be in the plan, when it has one): what a caller checks
/// before it prepares the run (a worktree, a sandbox, a dashboard), and [`start`] checks again.
pub fn ready(root: &Path, spec: &GoalSpec) -> Result<(), LoopError> {
    spec.check_work(read_plan(root, spec)?.plan())
}

/// Starts a new goal run over the plan's active goals (those of its scope) and drives it.
/// `on_start` is told the run id before the first iteration.
pub async fn start(
    deps: &Deps,
    spec: GoalSpec,
    interrupt: CancellationToken,
    on_start: impl FnOnce(&RunId),
) -> Result<(RunId, GoalEnd), LoopError> {
    ready(deps.ws.root(), &spec)?;
    let kind = GoalLoop::new(deps, spec.clone(), Vec::new())?;
    looping::start(deps, RunKind::Goal, &spec, kind, interrupt, on_start).await
}

/// Resumes a stopped goal run (paused, blocked, interrupted, killed, or out of budget — the
/// budget starts again then) from where the plan and the store say it stands. The first prompt
/// owes what the last iteration left (its rejected sign-offs, what it said it did) and the
/// answers to questions an interrupted iteration asked. `on_open` hears its id once the run is
/// held under its lock.
pub async fn resume(
    deps: &Deps,
    run: &RunId,
    by: &str,
    interrupt: CancellationToken,
    on_open: impl FnOnce(&RunId),
) -> Result<GoalEnd, LoopError> {
    let what = (RunKind::Goal, by);
    looping::resume(deps, run, what, interrupt, on_open, |spec, answers| {
        let mut owed = owed_before_stop(deps, run, &spec)?;
        if !answers.is_empty() {
            owed.push(Feedback::Answers(answers));
        }
        GoalLoop::new(deps, spec, owed)
    })
    .await
}

/// The plan, if it parses.
pub(super) fn read_valid(deps: &Deps, spec: &GoalSpec) -> Result<PlanDoc, LoopError> {
    read_plan(deps.ws.root(), spec)
}

/// The plan of `spec` under `root`, read and checked.
fn read_plan(root: &Path, spec: &GoalSpec) -> Result<PlanDoc, LoopError> {
    let doc = plan_file::read(&root.join(&spec.plan))?;
    doc.check()
        .map_err(|e| LoopError::PlanInvalid(e.to_string()))?;
    Ok(doc)
}
