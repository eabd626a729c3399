//! Controlling a run from another shell: find it, show where it stands, pause it, cancel it.
//!
//! The requests themselves live with the store (`tether_store::control`, shared with the
//! dashboard); here they are given the run's lock file from the workspace, and [`view`] says
//! where a run stands for `tether status`.

use serde::Serialize;
use tether_store::{
    Author, Budget, Event, Run, RunId, RunStatus, Seq, Spending, SpentBudget, Store, StoredEvent,
    Unit, Usage, UsageLimitWait,
};

use crate::looping;
use crate::run_lock::RunLock;
use tether_config::Workspace;

pub use tether_store::control::{Control, ControlError, find_run, is_ended};

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
    /// What the run's agent turns used so far.
    pub usage: Usage,
    /// What the sign-off judge's calls used so far.
    pub judge_usage: Usage,
    /// What the loop judge's calls used so far.
    pub loop_judge_usage: Usage,
    /// The run's limits now (raises included); unset units are unlimited.
    pub limits: Budget,
    /// What the run has spent against them.
    pub spent: Spending,
    /// The budget that stopped the run, while it stays stopped.
    pub budget_spent: Option<SpentBudget>,
    /// Where transcripts are, relative to the workspace.
    pub transcripts: String,
    /// The machine the run belongs to (`None` for runs recorded before tether kept it).
    pub machine: Option<String>,
    /// The workspace it works in, on its machine.
    pub workspace: String,
    /// Whether it belongs to another machine (a team store): whether a process drives it
    /// cannot be told from here, so it is never called orphaned.
    pub elsewhere: bool,
    /// The branch a run in a worktree of its own works on (`tether/<run-id>`).
    pub branch: Option<String>,
}

/// Where `run` stands, including whether its process is alive.
pub fn view(store: &Store, ws: &Workspace, run: &Run) -> Result<RunView, ControlError> {
    let elsewhere = tether_store::control::is_elsewhere(run);
    let pid = if elsewhere {
        None
    } else {
        RunLock::holder(&lock_of(ws, run))
    };
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
        orphaned: active && pid.is_none() && !elsewhere,
        iteration: state.iteration,
        in_progress: state.in_progress,
        budget_used: state.budget_used(),
        max_iterations: state.max_iterations,
        created_at_ms: run.created_at_ms,
        // A side question is no step of the run's: the last event is the run's own.
        last_event: recent
            .iter()
            .rev()
            .find(|e| !matches!(e.event, Some(Event::SideQuestion { .. })))
            .cloned(),
        last_tool_call,
        usage_limit: state.usage_limit.clone(),
        usage: state.usage,
        judge_usage: state.judge_usage,
        loop_judge_usage: state.loop_judge_usage,
        limits: run.limits(),
        spent: state.spending(tether_store::now_ms()),
        budget_spent: state.budget_spent.clone(),
        transcripts: ws
            .display(&ws.runs_dir().join(run.id.to_string()))
            .into_owned(),
        machine: run.machine.clone(),
        workspace: run.workspace.display().to_string(),
        // A run of this workspace's store recorded elsewhere on this machine works in its
        // worktree.
        branch: (!elsewhere && run.workspace != ws.root()).then(|| format!("tether/{}", run.id)),
        elsewhere,
    })
}

/// The run's lock file: in its own workspace (a team store holds runs of other workspaces of
/// this machine too), or in `ws` for runs that do not say.
fn lock_of(ws: &Workspace, run: &Run) -> std::path::PathBuf {
    if run.workspace.as_os_str().is_empty() || run.workspace == ws.root() {
        looping::lock_path(ws, &run.id)
    } else {
        looping::lock_path(&Workspace::at(run.workspace.clone()), &run.id)
    }
}

/// Asks the run to pause at its next iteration boundary (or pauses a stopped, unfinished run),
/// for `by`: a person, or the run's own agent (`author`).
pub fn pause(
    store: &Store,
    ws: &Workspace,
    run: &Run,
    by: (&str, Author),
) -> Result<Control, ControlError> {
    tether_store::control::pause(store, &lock_of(ws, run), run, by)
}

/// Cancels the run: a live loop stops its current iteration; a stopped run is marked cancelled.
pub fn cancel(store: &Store, ws: &Workspace, run: &Run, by: &str) -> Result<Control, ControlError> {
    tether_store::control::cancel(store, &lock_of(ws, run), run, by)
}

/// Queues a message from `by` for the run's agent: it is delivered at the start of the next
/// iteration (recorded when it is), as a person's, or as the agent's own note when `by` is the
/// agent. A run that ended cannot take messages.
pub fn say(
    store: &Store,
    run: &Run,
    text: &str,
    by: (&str, Author),
) -> Result<Control, ControlError> {
    tether_store::control::say(store, run, text, by)
}

impl RunView {
    /// `agent 1200 in / 340 out tokens · judge 300 in / 20 out tokens`: who used what, for
    /// people; `None` when nothing was recorded.
    pub fn usage_line(&self) -> Option<String> {
        let parts: Vec<String> = [
            ("agent", &self.usage),
            ("judge", &self.judge_usage),
            ("loop judge", &self.loop_judge_usage),
        ]
        .iter()
        .filter(|(_, u)| u.is_known())
        .map(|(who, u)| format!("{who} {}", u.describe()))
        .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    /// `tokens 12.3k of 400k · cost $0.42 of $5.00`: what was spent of each limited unit
    /// besides iterations (shown elsewhere); `None` when only iterations are limited.
    pub fn budget_line(&self) -> Option<String> {
        budget_line(&self.limits, &self.spent)
    }
}

/// `tokens 12.3k tokens of 400k tokens · cost $0.42 of $5.00`: what was spent of each limited
/// unit but iterations; `None` when none is limited.
pub fn budget_line(limits: &Budget, spent: &Spending) -> Option<String> {
    let parts: Vec<String> = [Unit::Tokens, Unit::CostUsd, Unit::Duration]
        .into_iter()
        .filter_map(|unit| {
            let limit = limits.get(unit)?;
            Some(format!(
                "{} of {}",
                unit.format(spent.get(unit)),
                unit.format(limit)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}
