//! Controlling a run from another shell: find it, show where it stands, pause it, cancel it.
//!
//! The requests themselves live with the store (`tether_store::control`, shared with the
//! dashboard); here they are given the run's lock file from the workspace, and [`view`] says
//! where a run stands for `tether status`, from the read model every surface reads
//! ([`tether_read`]).

use serde::Serialize;
use tether_store::{
    Author, Budget, Run, RunId, RunStatus, Spending, SpentBudget, Store, StoredEvent, Usage,
    UsageLimitWait,
};

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

/// Where `run` stands, including whether its process is alive: its header and activity as the
/// read model gives them ([`tether_read`]), which the dashboard reads too.
pub fn view(store: &Store, ws: &Workspace, run: &Run) -> Result<RunView, ControlError> {
    let header = tether_read::RunHeader::of(ws, run, tether_store::now_ms());
    let activity = tether_read::activity(store, run)?;
    Ok(RunView {
        kind: header.kind.as_str().to_owned(),
        status: header.status,
        pid: header.pid,
        orphaned: header.orphaned,
        iteration: header.iteration,
        in_progress: header.in_progress,
        budget_used: header.budget_used,
        max_iterations: header.max_iterations,
        created_at_ms: header.created_at_ms,
        last_event: activity.last_event,
        last_tool_call: activity.last_tool_call,
        usage_limit: header.usage_limit,
        usage: header.usage,
        judge_usage: header.judge_usage,
        loop_judge_usage: header.loop_judge_usage,
        limits: header.limits,
        spent: header.spent,
        budget_spent: header.budget_spent,
        transcripts: ws
            .display(&ws.runs_dir().join(run.id.to_string()))
            .into_owned(),
        machine: header.machine,
        workspace: header.workspace,
        branch: header.branch,
        elsewhere: header.elsewhere,
        id: header.id,
    })
}

/// Asks the run to pause at its next iteration boundary (or pauses a stopped, unfinished run),
/// for `by`: a person, or the run's own agent (`author`).
pub fn pause(
    store: &Store,
    ws: &Workspace,
    run: &Run,
    by: (&str, Author),
) -> Result<Control, ControlError> {
    tether_store::control::pause(store, &tether_read::lock_of(ws, run), run, by)
}

/// Cancels the run: a live loop stops its current iteration; a stopped run is marked cancelled.
pub fn cancel(store: &Store, ws: &Workspace, run: &Run, by: &str) -> Result<Control, ControlError> {
    tether_store::control::cancel(store, &tether_read::lock_of(ws, run), run, by)
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
    /// Who used what, said as every surface says it ([`tether_read::usage_line`]).
    pub fn usage_line(&self) -> Option<String> {
        tether_read::usage_line(&self.usage, &self.judge_usage, &self.loop_judge_usage)
    }

    /// What was spent of each limited unit besides iterations (shown elsewhere), said as every
    /// surface says it ([`tether_read::budget_line`]); `None` when only iterations are limited.
    pub fn budget_line(&self) -> Option<String> {
        tether_read::budget_line(&self.limits, &self.spent)
    }
}
