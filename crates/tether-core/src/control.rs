//! Controlling a run from another shell: find it, show where it stands, pause it, cancel it.
//!
//! A running loop only reads requests from its journal at safe points, so pause and cancel are
//! *requests* appended as events. A run whose process is gone (stopped, or killed) is changed
//! directly instead, since nobody else will act on a request.

use serde::Serialize;
use tether_store::{
    Event, Outcome, Run, RunId, RunStatus, Seq, Store, StoreError, StoredEvent, UsageLimitWait,
};

use crate::looping;
use crate::run_lock::RunLock;
use tether_config::Workspace;

/// A run could not be found or changed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// There are no runs in this workspace yet; start one with `tether ralph`.
    #[error("no runs yet in this workspace; start one with `tether ralph \"<prompt>\"`")]
    NoRuns,
    /// The id does not parse or names no run; `tether status` shows the latest.
    #[error("no run `{0}` in this workspace")]
    UnknownRun(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The run named by `id`, or the latest run.
pub fn find_run(store: &Store, id: Option<&str>) -> Result<Run, ControlError> {
    match id {
        None => store.latest_run()?.ok_or(ControlError::NoRuns),
        Some(s) => {
            let unknown = || ControlError::UnknownRun(s.to_owned());
            let id: RunId = s.parse().map_err(|_| unknown())?;
            match store.run(&id) {
                Ok(run) => Ok(run),
                Err(StoreError::NotFound { .. }) => Err(unknown()),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// A run as `tether status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    /// The run's id.
    pub id: RunId,
    /// `ralph`, `goal`, ….
    pub kind: String,
    /// The journal's status.
    pub status: RunStatus,
    /// Whether a live process drives it, and which.
    pub pid: Option<u32>,
    /// True when the journal says it is running but no process drives it (it was killed).
    pub orphaned: bool,
    /// The last completed iteration.
    pub iteration: u32,
    /// The iteration in progress, if any.
    pub in_progress: Option<u32>,
    /// Iterations used of the current budget.
    pub budget_used: u32,
    /// The budget, if limited.
    pub max_iterations: Option<u32>,
    /// When the run was created (ms since the epoch).
    pub created_at_ms: i64,
    /// The last event.
    pub last_event: Option<StoredEvent>,
    /// The last tool call, if any.
    pub last_tool_call: Option<String>,
    /// The usage limit of the agent the loop is waiting out, if it is.
    pub usage_limit: Option<UsageLimitWait>,
    /// Where transcripts are, relative to the workspace.
    pub transcripts: String,
}

/// Where `run` stands, including whether its process is alive.
pub fn view(store: &Store, ws: &Workspace, run: &Run) -> Result<RunView, ControlError> {
    let pid = RunLock::holder(&looping::lock_path(ws, &run.id));
    let state = &run.state;
    let active = matches!(
        state.status,
        RunStatus::Running | RunStatus::WaitingForInput
    );
    let recent = store.events(&run.id, Seq(run.last_event_seq.0.saturating_sub(200)), 200)?;
    let last_tool_call = recent.iter().rev().find_map(|e| match &e.event {
        Some(Event::ToolCalled { summary, .. }) => Some(summary.clone()),
        _ => None,
    });
    Ok(RunView {
        id: run.id.clone(),
        kind: run.kind.as_str().to_owned(),
        status: state.status,
        pid,
        orphaned: active && pid.is_none(),
        iteration: state.iteration,
        in_progress: state.in_progress,
        budget_used: state.budget_used(),
        max_iterations: state.max_iterations,
        created_at_ms: run.created_at_ms,
        last_event: recent.last().cloned(),
        last_tool_call,
        usage_limit: state.usage_limit.clone(),
        transcripts: ws
            .display(&ws.runs_dir().join(run.id.to_string()))
            .into_owned(),
    })
}

/// What a pause or cancel did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A live loop was asked; it acts at its next safe point.
    Requested,
    /// No process drives the run, so it was changed directly.
    Applied,
    /// The run had already ended (or was already in that state); nothing changed.
    Unchanged(RunStatus),
}

fn is_ended(status: RunStatus) -> bool {
    matches!(
        status,
        RunStatus::Completed | RunStatus::Cancelled | RunStatus::Failed
    )
}

/// Asks the run to pause at its next iteration boundary (or pauses a stopped, unfinished run).
pub fn pause(store: &Store, ws: &Workspace, run: &Run, by: &str) -> Result<Control, ControlError> {
    let status = run.state.status;
    if is_ended(status) || status == RunStatus::Paused {
        return Ok(Control::Unchanged(status));
    }
    if RunLock::holder(&looping::lock_path(ws, &run.id)).is_some() {
        store.append(Some(&run.id), &Event::PauseRequested { by: by.to_owned() })?;
        return Ok(Control::Requested);
    }
    if status == RunStatus::BudgetExhausted || status == RunStatus::Blocked {
        return Ok(Control::Unchanged(status));
    }
    let reason = format!("paused by {by} while no process was driving it");
    store.append(Some(&run.id), &Event::Paused { reason })?;
    Ok(Control::Applied)
}

/// Cancels the run: a live loop stops its current iteration; a stopped run is marked cancelled.
pub fn cancel(store: &Store, ws: &Workspace, run: &Run, by: &str) -> Result<Control, ControlError> {
    let status = run.state.status;
    if is_ended(status) {
        return Ok(Control::Unchanged(status));
    }
    store.append(Some(&run.id), &Event::CancelRequested { by: by.to_owned() })?;
    if RunLock::holder(&looping::lock_path(ws, &run.id)).is_some() {
        return Ok(Control::Requested);
    }
    store.append(
        Some(&run.id),
        &Event::RunFinished {
            outcome: Outcome::Cancelled,
        },
    )?;
    Ok(Control::Applied)
}

/// Queues a message from `by` for the run's agent: it is delivered at the start of the next
/// iteration (recorded when it is). A run that ended cannot take messages.
pub fn say(store: &Store, run: &Run, text: &str, by: &str) -> Result<Control, ControlError> {
    let status = run.state.status;
    if is_ended(status) {
        return Ok(Control::Unchanged(status));
    }
    store.append(
        Some(&run.id),
        &Event::MessageQueued {
            text: text.to_owned(),
            by: by.to_owned(),
        },
    )?;
    Ok(Control::Requested)
}
