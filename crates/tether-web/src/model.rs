//! What the pages and the API show, read from the store in one place: a run as the runs list
//! shows it, a run in detail, the plan a goal run works on. The API serialises these; the
//! views render them.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use tether_config::Workspace;
use tether_read::{Group, IterationUsage};
use tether_store::{
    Iteration, Question, QueuedMessage, Run, RunKind, RunStatus, Store, VerdictRecord,
};

use crate::error::WebError;

/// A run as the runs list shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// The run's id.
    pub id: String,
    /// `ralph` or `goal`.
    pub kind: RunKind,
    /// Where it stands.
    pub status: RunStatus,
    /// The group a person looks for it in (`needs_input`, `running`, `paused`, `done`), as
    /// `tether watch` groups it: a run waiting for a person is never `running`.
    pub group: Group,
    /// The pid of the live process driving it, if one does.
    pub pid: Option<u32>,
    /// The journal says it runs but no process drives it (it was killed).
    pub orphaned: bool,
    /// What it works toward: the Ralph prompt, or the plan file of a goal run.
    pub objective: String,
    /// The goals a goal run works on (the plan's active goals and those it decided).
    pub goals: Vec<String>,
    /// Iterations used of the current budget.
    pub iteration: u32,
    /// The iteration in progress.
    pub in_progress: Option<u32>,
    /// The budget (`None` or 0: unlimited).
    pub max_iterations: Option<u32>,
    /// When it was created (ms since the epoch).
    pub created_at_ms: i64,
    /// When its last event was appended.
    pub last_event_at_ms: Option<i64>,
    /// Its last event's type.
    pub last_event_kind: Option<String>,
    /// How many of its questions wait for an answer.
    pub pending_questions: usize,
    /// The agent's usage limit the loop is waiting out, if it is.
    pub usage_limit: Option<tether_store::UsageLimitWait>,
    /// The budget that stopped it, while it stays stopped.
    pub budget_spent: Option<tether_store::SpentBudget>,
    /// What its agent turns used so far.
    pub usage: tether_store::Usage,
    /// The machine that created it and can drive it (`None` for runs recorded before tether
    /// kept it).
    pub machine: Option<String>,
    /// The workspace it works in, on its machine.
    pub workspace: String,
    /// Its repository's remote, when it has one.
    pub repo_remote: Option<String>,
    /// Whether it belongs to this machine (its process, if any, can be seen from here).
    pub here: bool,
    /// The branch a run in a worktree of its own works on (`tether/<run-id>`): a run of this
    /// machine whose workspace is not the one served.
    pub branch: Option<String>,
    /// The seq of its newest event (left out of the JSON: `GET /api/runs/{id}` has it).
    #[serde(skip)]
    pub last_event_seq: i64,
}

impl RunSummary {
    /// The summary of `run`; `goals` are the goal ids the caller found for it. Read from the
    /// run's header in the read model ([`tether_read::RunHeader`]), as `tether status` is.
    pub fn of(ws: &Workspace, run: &Run, goals: Vec<String>) -> RunSummary {
        let h = tether_read::RunHeader::of(ws, run, tether_store::now_ms());
        RunSummary {
            id: h.id.to_string(),
            kind: h.kind,
            status: h.status,
            group: Group::of(&h),
            pid: h.pid,
            orphaned: h.orphaned,
            objective: h.objective,
            goals,
            iteration: h.budget_used,
            in_progress: h.in_progress,
            max_iterations: h.max_iterations,
            created_at_ms: h.created_at_ms,
            last_event_at_ms: h.last_event_at_ms,
            last_event_kind: h.last_event_kind,
            pending_questions: h.pending_questions,
            usage_limit: h.usage_limit,
            budget_spent: h.budget_spent,
            usage: h.usage,
            machine: h.machine,
            workspace: h.workspace,
            repo_remote: h.repo_remote,
            branch: h.branch,
            here: !h.elsewhere,
            last_event_seq: run.last_event_seq.0,
        }
    }

    /// Whether a person is waiting to be asked: a question of this run has no answer.
    pub fn waiting_for_input(&self) -> bool {
        self.status == RunStatus::WaitingForInput
    }
}

/// Whether `run` was created on this machine (runs recorded before machines were kept are
/// taken as this machine's: they come from a workspace's own store).
pub fn is_here(run: &Run) -> bool {
    !tether_store::control::is_elsewhere(run)
}

/// The plan file a run works on (goal runs), resolved in the workspace.
pub fn plan_path(ws: &Workspace, run: Option<&Run>) -> PathBuf {
    let named = run
        .and_then(|r| r.spec.get("plan"))
        .and_then(Value::as_str)
        .unwrap_or(tether_config::Config::DEFAULT_PLAN);
    ws.root().join(named)
}

/// Adds what the store knows to `goals` (one per goal of `plan`, in order): each contract's
/// state, and a `done` goal with no accepted sign-off. A store error leaves them unset.
fn store_flags(store: &Store, key: &str, plan: &tether_plan::Plan, goals: &mut [GoalView]) {
    let states = tether_plan::contract_states(plan, |id| {
        Ok::<_, tether_store::StoreError>(store.approval(key, id)?.map(|a| {
            tether_plan::ApprovedContract {
                hash: a.contract_hash,
                by: a.approved_by,
                at_ms: a.approved_at_ms,
            }
        }))
    });
    for c in states.into_iter().flatten() {
        let Some(view) = goals.get_mut(c.index) else {
            continue;
        };
        view.contract = Some(match c.state {
            tether_plan::ContractState::Approved => "approved".to_owned(),
            tether_plan::ContractState::NeverApproved => "not approved yet".to_owned(),
            tether_plan::ContractState::Changed {
                approved_by,
                approved_at_ms,
            } => format!(
                "changed since {approved_by} approved it on {}: approve it again before it can \
                 be signed off",
                tether_store::utc_clock(approved_at_ms)
            ),
        });
        if c.status == tether_plan::Status::Done
            && !store.has_accepted_signoff(key, &c.id).unwrap_or(true)
        {
            view.flag = Some("done, but no sign-off is recorded".to_owned());
        }
    }
}

/// One goal of the plan, as the run page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct GoalView {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// open, active, done, cancelled.
    pub status: String,
    /// What done means.
    pub done_when: Option<String>,
    /// The command that checks it.
    pub verify: Option<String>,
    /// How it could look done while it is not.
    pub failure_modes: Vec<String>,
    /// Subtasks with whether each is ticked.
    pub subtasks: Vec<(String, bool)>,
    /// Where its contract stands against the approval in the store (`approved`, `not approved
    /// yet`, `changed since ana approved it on …`), when the store was read and the id is usable.
    pub contract: Option<String>,
    /// What only the store can tell is wrong: `done` with no sign-off recorded.
    pub flag: Option<String>,
}

/// The plan a goal run works on.
#[derive(Debug, Clone, Serialize)]
pub struct PlanView {
    /// The plan file, relative to the workspace.
    pub path: String,
    /// Its goals.
    pub goals: Vec<GoalView>,
    /// The plan's problems, one line each (`plan.md:12: error: …`).
    pub problems: Vec<String>,
    /// The last log lines.
    pub log: Vec<String>,
    /// Why it could not be read, if it could not.
    pub unreadable: Option<String>,
}

impl PlanView {
    fn empty() -> PlanView {
        PlanView {
            path: String::new(),
            goals: Vec::new(),
            problems: Vec::new(),
            log: Vec::new(),
            unreadable: None,
        }
    }
}

/// Reads the plan at `path` (bounded; never blocks on a FIFO).
pub fn plan(ws: &Workspace, path: &std::path::Path) -> PlanView {
    plan_read(ws, path, None)
}

/// [`plan`], with each goal's contract state and sign-off flag from `store`.
pub fn plan_checked(store: &Store, ws: &Workspace, path: &std::path::Path) -> PlanView {
    plan_read(ws, path, Some(store))
}

fn plan_read(ws: &Workspace, path: &std::path::Path, store: Option<&Store>) -> PlanView {
    let shown = ws.display(path).into_owned();
    let doc = match tether_plan::file::read(path) {
        Ok(doc) => doc,
        Err(e) => {
            return PlanView {
                path: shown,
                goals: Vec::new(),
                problems: Vec::new(),
                log: Vec::new(),
                unreadable: Some(e.to_string()),
            };
        }
    };
    let plan = doc.plan();
    let goals = plan
        .goals
        .iter()
        .map(|g| GoalView {
            id: g.id().unwrap_or_default().to_owned(),
            title: g.title.clone(),
            status: g.status().as_str().to_owned(),
            done_when: g.done_when.as_ref().map(|d| d.value.clone()),
            verify: g.verify.as_ref().map(|v| v.value.clone()),
            failure_modes: g.failure_modes.iter().map(|f| f.value.clone()).collect(),
            subtasks: g
                .subtasks
                .iter()
                .map(|s| (s.text.clone(), s.checked))
                .collect(),
            contract: None,
            flag: None,
        })
        .collect();
    let mut goals: Vec<GoalView> = goals;
    if let Some(store) = store {
        let key = path
            .strip_prefix(ws.root())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        store_flags(store, &key, plan, &mut goals);
    }
    let log = plan.log.as_ref().map_or_else(Vec::new, |l| {
        let skip = l.entries.len().saturating_sub(5);
        l.entries
            .iter()
            .skip(skip)
            .map(|e| e.text.clone())
            .collect()
    });
    PlanView {
        path: shown.clone(),
        goals,
        problems: plan
            .problems
            .iter()
            .map(|p| format!("{shown}:{}: {}", p.line, p.message))
            .collect(),
        log,
        unreadable: None,
    }
}

/// The goal ids a goal run works on: the plan's active goals and every goal it decided.
pub fn goal_ids(plan: &PlanView, verdicts: &[VerdictRecord]) -> Vec<String> {
    let mut ids: Vec<String> = plan
        .goals
        .iter()
        .filter(|g| g.status == "active" && !g.id.is_empty())
        .map(|g| g.id.clone())
        .collect();
    for v in verdicts {
        if !ids.contains(&v.decision.goal_id) {
            ids.push(v.decision.goal_id.clone());
        }
    }
    ids
}

/// A run in detail: what the run page and `GET /api/runs/{id}` show.
#[derive(Debug, Clone, Serialize)]
pub struct RunDetail {
    /// The run as the list shows it.
    pub run: RunSummary,
    /// Its parameters.
    pub spec: Value,
    /// Its iterations.
    pub iterations: Vec<Iteration>,
    /// Its sign-off decisions, with the judge's checks and `missing` list.
    pub verdicts: Vec<VerdictRecord>,
    /// Its questions and their answers.
    pub questions: Vec<Question>,
    /// Messages queued for its agent and not yet delivered.
    pub queued_messages: Vec<QueuedMessage>,
    /// The plan (goal runs).
    pub plan: Option<PlanView>,
    /// The run's report (`.tether/runs/<run>/report.md`, written when the run ends), when
    /// there is one on this machine.
    pub report: Option<String>,
    /// The seq of its newest event: a live stream of it starts after this one.
    pub last_event_seq: i64,
}

/// Reads a run in detail.
pub fn detail(store: &Store, ws: &Workspace, run: &Run) -> Result<RunDetail, WebError> {
    let verdicts = store.verdicts_for_run(&run.id)?;
    // The plan file of a run of another machine is on that machine.
    let plan = (run.kind == RunKind::Goal && is_here(run))
        .then(|| plan_checked(store, ws, &plan_path(ws, Some(run))));
    let goals = plan
        .as_ref()
        .map_or_else(Vec::new, |p| goal_ids(p, &verdicts));
    Ok(RunDetail {
        run: RunSummary::of(ws, run, goals),
        spec: run.spec.clone(),
        iterations: store.iterations(&run.id)?,
        questions: store.questions_for_run(&run.id)?,
        queued_messages: run.state.queued_messages.clone(),
        verdicts,
        plan,
        report: is_here(run).then(|| report(ws, run)).flatten(),
        last_event_seq: run.last_event_seq.0,
    })
}

/// The largest report shown.
const MAX_REPORT_BYTES: u64 = 512 * 1024;

/// The run's report file, read bounded: a regular file of at most [`MAX_REPORT_BYTES`], opened
/// without blocking (a FIFO put in its place cannot hang the page).
fn report(ws: &Workspace, run: &Run) -> Option<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = if run.workspace.as_os_str().is_empty() || run.workspace == ws.root() {
        ws.runs_dir()
    } else {
        Workspace::at(run.workspace.clone()).runs_dir()
    };
    let path = dir.join(run.id.as_str()).join("report.md");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(&path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_REPORT_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_REPORT_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// One run as the runs list shows it.
pub fn runs_one(store: &Store, ws: &Workspace, run: &Run) -> Result<RunSummary, WebError> {
    summary(store, ws, run, &mut None)
}

/// A run's summary; the goals of a goal run are those it decided and, while it goes on, the
/// plan's active ones (`active` keeps the plan read once per list).
pub(crate) fn summary(
    store: &Store,
    ws: &Workspace,
    run: &Run,
    active: &mut Option<PlanView>,
) -> Result<RunSummary, WebError> {
    if run.kind != RunKind::Goal {
        return Ok(RunSummary::of(ws, run, Vec::new()));
    }
    let verdicts = store.verdicts_for_run(&run.id)?;
    // The plan of a run of another machine is there, not here: its decided goals only.
    let goals = if run.state.status.is_stopped() || !is_here(run) {
        goal_ids(&PlanView::empty(), &verdicts)
    } else {
        let p = active.get_or_insert_with(|| plan(ws, &plan_path(ws, Some(run))));
        goal_ids(p, &verdicts)
    };
    Ok(RunSummary::of(ws, run, goals))
}

/// The most usage events (an iteration's start, its agent's and the judges' usage, its end)
/// read for a run's sparkline on the runs list, for each of the many runs the list shows: those
/// of about its newest 40 iterations, as many as a sparkline has bars, at four an iteration
/// (fewer without a judge), however many tool calls and messages lie between them.
pub const SPARK_EVENTS: usize = 160;
/// The most runs whose sparkline is kept.
const SPARKS_KEPT: usize = 2_000;

/// The runs list's sparklines already read, each with the seq of its run's newest event then:
/// a run whose journal has not grown since is not read again (a run that ended, never).
#[derive(Debug, Default)]
pub struct Sparks(std::sync::Mutex<std::collections::HashMap<String, (i64, Vec<IterationUsage>)>>);

impl Sparks {
    /// The newest iterations of the run `r` with what each used, as its sparkline draws them:
    /// from at most [`SPARK_EVENTS`] of its newest usage events, or as kept when its journal has
    /// not grown.
    pub fn of(&self, store: &Store, r: &RunSummary) -> Result<Vec<IterationUsage>, WebError> {
        if let Ok(kept) = self.0.lock()
            && let Some((seq, series)) = kept.get(&r.id)
            && *seq == r.last_event_seq
        {
            return Ok(series.clone());
        }
        let id: tether_store::RunId =
            r.id.parse()
                .map_err(|_| WebError::NotFound(format!("no run `{}`", r.id)))?;
        let series = tether_read::recent_usage_series(store, &id, SPARK_EVENTS)?;
        if let Ok(mut kept) = self.0.lock() {
            if kept.len() >= SPARKS_KEPT {
                kept.clear();
            }
            kept.insert(r.id.clone(), (r.last_event_seq, series.clone()));
        }
        Ok(series)
    }
}

/// The most of a verify log shown on a page.
const TAIL_BYTES: u64 = 4096;

/// The end of the verify command's output for a verdict of a run (its log under
/// `.tether/runs/<run>/`), at most the last 4 KB and 20 lines; `None` when there is no log.
/// Only regular files are read, without blocking, so nothing an agent put there can hang it.
pub fn verify_tail(ws: &Workspace, v: &VerdictRecord) -> Option<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt as _;
    let d = &v.decision;
    let run = d.run_id.as_ref()?;
    d.verify_exit?;
    let safe = |s: &str| {
        !s.is_empty()
            && !s.starts_with('.')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    };
    if !safe(&d.goal_id) {
        return None;
    }
    let path = ws
        .runs_dir()
        .join(run.as_str())
        .join(format!("verify-{}-{}.log", d.goal_id, d.attempt));
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(&path)
        .ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(20);
    Some(lines[skip..].join("\n"))
}

/// A pending question, with whether its asker still waits.
pub use tether_store::PendingQuestion as Pending;

/// Every pending question, oldest first.
pub fn pending(store: &Store) -> Result<Vec<Pending>, WebError> {
    Ok(store.pending_with_waiters()?)
}
