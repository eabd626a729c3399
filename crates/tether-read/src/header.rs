//! Where a run stands, from its row: the one place a run's state, its process, its budget and
//! its usage are read for people.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use tether_budget::{Budget, Spending};
use tether_config::Workspace;
use tether_store::run_lock::RunLock;
use tether_store::{
    GoalUsage, Run, RunFilter, RunId, RunKind, RunStatus, SpentBudget, Store, StoreError, Usage,
    UsageLimitWait,
};

// The header's every field is read from the run's row and its lock file; nothing here asks the
// journal (see `activity.rs` for that).

/// A run's header: everything a surface shows of a run at a glance.
#[derive(Debug, Clone, Serialize)]
pub struct RunHeader {
    /// The run's id.
    pub id: RunId,
    /// `ralph` or `goal`.
    pub kind: RunKind,
    /// The journal's status.
    pub status: RunStatus,
    /// The pid of the live process of this machine driving it, if one does.
    pub pid: Option<u32>,
    /// The journal says it runs (or waits for a person) but no process of this machine drives
    /// it: it was killed. Never said of a run of another machine.
    pub orphaned: bool,
    /// It belongs to another machine (a team store): whether a process drives it cannot be
    /// told from here.
    pub elsewhere: bool,
    /// The last completed iteration.
    pub iteration: u32,
    /// The iteration in progress, if any.
    pub in_progress: Option<u32>,
    /// Iterations used of the current budget.
    pub budget_used: u32,
    /// The iteration budget now, what people added included (`None` or 0: unlimited).
    pub max_iterations: Option<u32>,
    /// What it works toward: the Ralph prompt, or the plan file of a goal run.
    pub objective: String,
    /// When it was created (ms since the epoch).
    pub created_at_ms: i64,
    /// When its last event was appended.
    pub last_event_at_ms: Option<i64>,
    /// Its last event's type.
    pub last_event_kind: Option<String>,
    /// How many of its questions wait for an answer.
    pub pending_questions: usize,
    /// The agent's usage limit the loop is waiting out, if it is.
    pub usage_limit: Option<UsageLimitWait>,
    /// What its agent turns used so far.
    pub usage: Usage,
    /// What the sign-off judges' calls used so far.
    pub judge_usage: Usage,
    /// What the loop judge's calls used so far.
    pub loop_judge_usage: Usage,
    /// Its limits now (raises included); unset units are unlimited.
    pub limits: Budget,
    /// What it has spent against them.
    pub spent: Spending,
    /// The budget that stopped it, while it stays stopped.
    pub budget_spent: Option<SpentBudget>,
    /// What each goal's work used (iterations, tokens, cost), by goal id: a goal run's goals.
    pub goals: BTreeMap<String, GoalUsage>,
    /// The machine that created it (`None` for runs recorded before tether kept it).
    pub machine: Option<String>,
    /// The workspace it works in, on its machine.
    pub workspace: String,
    /// Its repository's remote, when it has one.
    pub repo_remote: Option<String>,
    /// The branch a run of this machine in a worktree of its own works on (`tether/<id>`).
    pub branch: Option<String>,
}

impl RunHeader {
    /// The header of `run`, seen from the workspace `ws` at `now_ms`.
    pub fn of(ws: &Workspace, run: &Run, now_ms: i64) -> RunHeader {
        let state = &run.state;
        let elsewhere = tether_store::control::is_elsewhere(run);
        // Only a run of this machine has a lock file that can be looked at; one of another
        // machine is taken at its journal's word.
        let pid = if elsewhere {
            None
        } else {
            RunLock::holder(&lock_of(ws, run))
        };
        let limits = run.limits();
        let active = matches!(
            state.status,
            RunStatus::Running | RunStatus::WaitingForInput
        );
        RunHeader {
            id: run.id.clone(),
            kind: run.kind,
            status: state.status,
            pid,
            orphaned: active && pid.is_none() && !elsewhere,
            elsewhere,
            iteration: state.iteration,
            in_progress: state.in_progress,
            budget_used: state.budget_used(),
            max_iterations: limits.iterations,
            objective: objective(run),
            created_at_ms: run.created_at_ms,
            last_event_at_ms: state.last_event_at_ms,
            last_event_kind: state.last_event_kind.clone(),
            pending_questions: state.pending_questions.len(),
            usage_limit: state.usage_limit.clone(),
            usage: state.usage,
            judge_usage: state.judge_usage,
            loop_judge_usage: state.loop_judge_usage,
            limits,
            spent: state.spending(now_ms),
            budget_spent: state.budget_spent.clone(),
            goals: state.goal_usage.clone(),
            machine: run.machine.clone(),
            workspace: run.workspace.display().to_string(),
            repo_remote: run.repo_remote.clone(),
            // A run of this machine recorded in another workspace works in its worktree.
            branch: (!elsewhere
                && !run.workspace.as_os_str().is_empty()
                && run.workspace != ws.root())
            .then(|| format!("tether/{}", run.id)),
        }
    }

    /// Whether a person is waiting to be asked: a question of this run has no answer.
    pub fn waiting_for_input(&self) -> bool {
        self.status == RunStatus::WaitingForInput
    }

    /// Who used what (`agent … · judge … · loop judge …`), see [`crate::usage_line`].
    pub fn usage_line(&self) -> Option<String> {
        crate::usage_line(&self.usage, &self.judge_usage, &self.loop_judge_usage)
    }

    /// What was spent of each limited unit, see [`crate::budget_line`].
    pub fn budget_line(&self) -> Option<String> {
        crate::budget_line(&self.limits, &self.spent)
    }
}

/// The run's lock file: in its own workspace (a team store holds runs of other workspaces of
/// this machine too), or in `ws` for runs that do not say.
pub fn lock_of(ws: &Workspace, run: &Run) -> PathBuf {
    if run.workspace.as_os_str().is_empty() || run.workspace == ws.root() {
        ws.run_lock(run.id.as_str())
    } else {
        Workspace::at(run.workspace.clone()).run_lock(run.id.as_str())
    }
}

/// The Ralph prompt, or the plan file of a goal run.
fn objective(run: &Run) -> String {
    let text = |k: &str| run.spec.get(k).and_then(Value::as_str).map(str::to_owned);
    text("prompt").or_else(|| text("plan")).unwrap_or_default()
}

/// The headers of up to `limit` runs `filter` selects, newest first.
pub fn runs(
    store: &Store,
    ws: &Workspace,
    filter: &RunFilter,
    limit: usize,
) -> Result<Vec<RunHeader>, StoreError> {
    let now = tether_store::now_ms();
    Ok(store
        .runs_matching(filter, None, limit)?
        .iter()
        .map(|run| RunHeader::of(ws, run, now))
        .collect())
}
