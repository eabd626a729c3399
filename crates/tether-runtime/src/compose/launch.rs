//! A run composed and driven. [`Launch`] says what to run — a new goal or Ralph run, or a
//! stopped run taken up again; in the checkout or in a worktree of its own — with which
//! configuration; [`Launch::prepare`] builds its parts (one store connection carrying the
//! caller's event sinks, the worktree, the human desk, the sandbox, the executor);
//! [`Prepared::start`] drives the loop as a task of a Tokio runtime the caller owns and hands
//! back a [`RunHandle`]: the run's id, interrupting or cancelling it, and how it
//! ended ([`Finished`]). The task does not depend on the caller waiting: a server starts a run
//! from a request and lets it outlive the request.
//!
//! Nothing here prints: what a person driving the run is told besides the events (its id once
//! known, a commit made, the loop judge left out) goes to the [`Observer`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_agent::Executor;
use tether_config::{Config, Env, Workspace};
use tether_core::bounds::Pinned;
use tether_core::goal::{self, GoalEnd, GoalSpec, RuleSettings};
use tether_core::looping::Deps;
use tether_core::ralph::{self, RalphEnd, RalphSpec};
use tether_human::{Console, Desk, NoticeQueue, NoticeSink};
use tether_store::{
    Budget, Connector, EventSink, Journal, Run, RunCell, RunId, RunKind, SpentBudget, StoredEvent,
};
use tether_worktree::Worktree;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::Host;
use crate::compose::lifetime::RunLifetime;
use crate::compose::worktree::{Commit, Kept, Placement};
use crate::error::{Error, Result};

/// Judge failures in a row that pause a goal run.
const JUDGE_FAILURES: u32 = 3;

/// How many events a watcher that falls behind may miss before it is told it lagged.
const EVENTS_BUFFER: usize = 1024;

/// What to run.
#[derive(Debug, Clone)]
pub enum RunSpec {
    /// A new goal run over the plan.
    Goal(GoalSpec),
    /// A new Ralph run.
    Ralph(RalphSpec),
    /// A stopped run of either loop, taken up again from where the store says it stands.
    Resume(RunId),
}

impl RunSpec {
    /// A goal run over `config`'s plan with its rules, the iteration budget `max_iterations`
    /// (`None`: unlimited) and the other budgets `budget`; `no_judge` signs goals off by verify
    /// alone. It works on every active goal: set its spec's `scope` for some of them alone.
    pub fn goal(
        config: &Config,
        max_iterations: Option<u32>,
        budget: Budget,
        no_judge: bool,
    ) -> Self {
        RunSpec::Goal(Self::goal_spec(config, max_iterations, budget, no_judge))
    }

    /// The spec of [`RunSpec::goal`].
    pub fn goal_spec(
        config: &Config,
        max_iterations: Option<u32>,
        budget: Budget,
        no_judge: bool,
    ) -> GoalSpec {
        let l = &config.r#loop;
        GoalSpec {
            plan: config.plan.to_string_lossy().into_owned(),
            max_iterations,
            budget,
            threshold: config.human.threshold,
            no_judge,
            rules: RuleSettings {
                spin_guard: l.spin_guard,
                oscillation_repeats: l.oscillation_repeats,
                reminder_after: l.reminder_after,
                clean_end_reminders: l.clean_end_reminders,
                judge_failures: JUDGE_FAILURES,
                asking_allowed: config.human.threshold > 0,
                escalate_after_rejects: l.escalate_after_rejects,
            },
            max_consecutive_failures: l.max_consecutive_failures,
            context: l.context,
            scope: None,
            settling: None,
        }
    }

    /// A Ralph run of `prompt`, done when the agent says `promise`.
    pub fn ralph(
        config: &Config,
        prompt: String,
        promise: Option<String>,
        max_iterations: Option<u32>,
        budget: Budget,
    ) -> Self {
        RunSpec::Ralph(RalphSpec {
            prompt,
            promise,
            max_iterations,
            budget,
            max_consecutive_failures: config.r#loop.max_consecutive_failures,
        })
    }
}

/// The budgets of `[loop]` besides iterations (a run started without flags).
pub fn loop_budget(config: &Config) -> Budget {
    let b = &config.r#loop.budget;
    Budget {
        iterations: None,
        tokens: b.tokens,
        cost_usd: b.cost_usd,
        duration_secs: b.duration_secs,
    }
}

/// Where a run works and what it leaves there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// A new run works in a git worktree of its own (a resumed run works where it did).
    pub worktree: bool,
    /// A run in a worktree commits on its branch: each goal it signs off, or a Ralph run's
    /// work when it keeps its promise.
    pub commit: bool,
}

impl Place {
    /// A resumed run: where it worked (its worktree found again, or the checkout), committing
    /// its sign-offs when it has a worktree.
    pub const RESUMED: Place = Place {
        worktree: false,
        commit: true,
    };
}

/// What a run tells the person driving it besides its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The loop judge `[loop_judge]` describes cannot be set up: the run goes on without it.
    LoopJudgeOff(String),
    /// A goal signed off was committed on the run's branch.
    GoalCommitted {
        /// The goal.
        goal: String,
        /// The commit.
        commit: Commit,
    },
    /// A run of many goals merged a goal's branch into its integration branch.
    GoalMerged {
        /// The goal.
        goal: String,
        /// The integration branch.
        branch: String,
        /// The merge commit (empty when the branch held the goal's work already).
        commit: String,
    },
    /// A run of many goals could not merge a goal's branch: the goal's agent or a person
    /// settles it.
    MergeConflict {
        /// The goal.
        goal: String,
        /// The paths in conflict.
        paths: Vec<String>,
        /// Who settles it.
        settles: Settles,
    },
}

/// Who settles a goal's conflicting merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settles {
    /// The goal's agent, in the goal's worktree with the run's branch merged in.
    Agent,
    /// A person, asked: the goal's merges conflicted `[run] merge_attempts` times.
    Person,
}

/// The run's id is known.
#[derive(Debug, Clone, Copy)]
pub struct Started<'a> {
    /// The run.
    pub run: &'a RunId,
    /// Whether it was taken up again rather than started.
    pub resumed: bool,
    /// Who does the work, for people (`anthropic claude-…`, `Claude Code`).
    pub executor: &'a str,
}

/// Who hears what a run tells besides its events: the CLI prints it; a server may log it.
pub trait Observer: Send + Sync {
    /// The run's id is known: a new run's before its first iteration, a resumed run's at once.
    fn started(&self, started: Started<'_>);
    /// Something worth telling.
    fn note(&self, note: Note);
}

/// An observer that logs.
#[derive(Debug, Default)]
pub struct Log;

impl Observer for Log {
    fn started(&self, s: Started<'_>) {
        tracing::info!(run = %s.run, resumed = s.resumed, executor = s.executor, "run started");
    }

    fn note(&self, note: Note) {
        tracing::info!(?note, "run note");
    }
}

/// Refuses to resume `run` in `ws` (its store `store`) — checked before anything is prepared
/// for it, so the refusal comes first: when it ended or another process drives it, on this
/// machine or any other ([`tether_core::looping::resumable`]: its lock, its lease), or when it
/// works in another workspace. A run whose driver stopped renewing its lease can be taken up
/// from any machine that has its workspace (the same path); from another path it is refused,
/// naming the machine and workspace it works in (a team store shows runs of every machine and
/// workspace; a workspace's own store holds only its runs, even after the directory moved).
pub fn resumable_here(
    ws: &Workspace,
    env: &dyn Env,
    store: &tether_store::Store,
    run: &Run,
) -> Result<()> {
    tether_core::looping::resumable(ws, store, run)?;
    if !crate::compose::store::is_team(ws, env)? {
        return Ok(());
    }
    let here = std::fs::canonicalize(ws.root()).unwrap_or_else(|_| ws.root().into());
    let there = std::fs::canonicalize(&run.workspace).unwrap_or_else(|_| run.workspace.clone());
    if run.workspace.as_os_str().is_empty() || here == there {
        return Ok(());
    }
    if tether_store::control::is_elsewhere(run) {
        return Err(Error::OtherMachine {
            run: run.id.to_string(),
            machine: run.machine.clone().unwrap_or_else(|| "unknown".to_owned()),
            workspace: run.workspace.display().to_string(),
        });
    }
    Err(Error::OtherWorkspace {
        run: run.id.to_string(),
        workspace: run.workspace.display().to_string(),
    })
}

/// Everything a run is composed from.
pub struct Launch {
    /// The workspace the command was given (a worktree run works in its own, with this one's
    /// state directory).
    pub ws: Workspace,
    /// The configuration the run uses: the one `bounds` records (a new run's as loaded, a
    /// resumed run's parsed from its record or as a person accepted it), never tether.toml as
    /// it is later.
    pub config: Config,
    /// The run's configuration as recorded, and how to see its file change during the run.
    pub bounds: Pinned,
    /// What to run.
    pub spec: RunSpec,
    /// Where a new run works.
    pub place: Place,
    /// Where the run works when its caller made the place for it (a goal of a run of many
    /// goals, in its own worktree, new or resumed): `place` then only says whether it commits.
    pub placement: Option<Placement>,
    /// The caller's own event sinks (`--events jsonl`, a progress line), called in order for
    /// each event the run commits, before the run's notices.
    pub sinks: Vec<Arc<dyn EventSink>>,
    /// Whether a person at a terminal answers questions there.
    pub console: Console,
    /// Who takes a stopped run up again, as the store records it (`cli`).
    pub by: String,
    /// How long the end of the run waits for its last notices to be delivered.
    pub notice_grace: Duration,
    /// Hears what the run tells besides its events.
    pub observer: Arc<dyn Observer>,
    /// How the process runs the tether commands the agent hands over.
    pub host: Host,
    /// The budget a goal's run in a run of many goals shares with the other goals' runs (its
    /// id joined to it beforehand); `None` for any other run.
    pub pool: Option<tether_core::looping::BudgetPool>,
}

impl Launch {
    /// Builds the run's parts: configuration problems (no model, no judge, a sandbox the
    /// kernel cannot enforce, a worktree that cannot be made) are found here, before anything
    /// runs. `env` holds the keys (the model's, the judge's).
    pub async fn prepare(self, env: &(dyn Env + Sync)) -> Result<Prepared> {
        let Launch {
            ws,
            config,
            bounds,
            spec,
            place,
            placement,
            mut sinks,
            console,
            by,
            notice_grace,
            observer,
            host,
            pool,
        } = self;
        // A goal run with nothing to work on is refused before anything is made for it.
        if let RunSpec::Goal(goal) = &spec {
            // Where it works: the place its caller made for it, when it made one.
            let root = placement.as_ref().map_or(ws.root(), |p| p.ws.root());
            tether_core::goal::ready(root, goal)?;
        }
        // What the run's children start ends with it.
        let lifetime = RunLifetime::begin();
        let host = host.for_run(&lifetime);
        // The run's store is its configuration's.
        let store = crate::compose::store::connector_of(&ws, &config.store)?;
        let (notice_sink, notices) = NoticeSink::new(&config.notify);
        sinks.push(Arc::new(notice_sink));
        let (events, _) = broadcast::channel(EVENTS_BUFFER);
        sinks.push(Arc::new(Broadcast(events.clone())));
        let journal = Journal::new(connect(&*store)?, sinks)?;
        let (placement, kind) = match (&spec, placement) {
            (RunSpec::Goal(_) | RunSpec::Ralph(_), Some(given)) => (given, None),
            (RunSpec::Goal(_) | RunSpec::Ralph(_), None)
                if place.worktree || config.run.worktree =>
            {
                (
                    crate::compose::worktree::for_new_run(&ws, &config).await?,
                    None,
                )
            }
            (RunSpec::Goal(_) | RunSpec::Ralph(_), None) => (Placement::in_place(&ws), None),
            (RunSpec::Resume(run), given) => {
                let record = journal.store().run(run)?;
                // A goal's run of a run of many goals is taken up in the worktree its run of
                // many goals gives it.
                let placement = match given {
                    Some(given) => given,
                    None => {
                        crate::compose::worktree::for_resumed_run(&ws, &record, &config).await?
                    }
                };
                let no_judge = record
                    .spec
                    .get("no_judge")
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false);
                (placement, Some((record.kind, no_judge)))
            }
        };
        let goal = match (&spec, kind) {
            (RunSpec::Goal(spec), _) => Some(spec.no_judge),
            (RunSpec::Resume(_), Some((RunKind::Goal, no_judge))) => Some(no_judge),
            _ => None,
        };
        let kept = Kept::default();
        let commit = (place.commit, goal.is_none().then_some(&kept));
        let isolation = placement.isolation(&journal, &config, commit, observer.clone());
        let run_ws = &placement.ws;
        let made = placement.made();
        let reach = crate::compose::reach::of(&config, run_ws, &journal);
        let human = Desk::from_config(&config, run_ws, journal.clone(), (console, reach));
        let cell = RunCell::default();
        // What the agent hands over through the bridge is this run's.
        let host = host.serving(&cell);
        let executor: Arc<dyn Executor> = match goal {
            Some(no_judge) => crate::compose::executor::for_goal_loop(
                (&config, run_ws, &made),
                env,
                (&journal, &human, &cell),
                no_judge,
                &host,
            )?,
            // Any other kind resumed is refused by the Ralph loop, naming the run's kind.
            None => crate::compose::executor::from_config(
                (&config, run_ws, &made),
                env,
                (&human, &cell),
                &host,
            )?,
        };
        let loop_judge = loop_judge(&config, env, &*observer);
        let deps = Deps {
            ws: run_ws.clone(),
            journal,
            executor,
            human,
            usage: crate::compose::executor::usage_waits(&config),
            price: config.model.as_ref().and_then(|m| m.price),
            loop_judge,
            env_remove: config.key_vars(),
            git: tether_signoff::git_confinement(&config),
            isolation,
            bounds: Some(Arc::new(bounds)),
            pool,
        };
        Ok(Prepared {
            ws,
            store,
            deps,
            spec,
            goal: goal.is_some(),
            worktree: placement.worktree,
            kept,
            cell,
            notices,
            notice_grace,
            events,
            by,
            observer,
            lifetime,
        })
    }
}

/// A store of `connector`'s place, saying which when it cannot be opened.
fn connect(connector: &dyn Connector) -> Result<tether_store::Store> {
    connector.connect().map_err(|cause| Error::OpenStore {
        place: connector.describe(),
        cause,
    })
}

/// The loop judge `[loop_judge]` describes, if any. One that cannot be set up (its key unset)
/// is left out and said: it is advisory, so the run goes on without it.
fn loop_judge(
    config: &Config,
    env: &dyn Env,
    observer: &dyn Observer,
) -> Option<tether_core::loop_judge::LoopJudge> {
    let settings = config.loop_judge.as_ref()?;
    match tether_core::loop_judge::LoopJudge::from_config(settings, env) {
        Ok(judge) => Some(judge),
        Err(e) => {
            tracing::warn!("the loop judge is off: {e}");
            observer.note(Note::LoopJudgeOff(e.to_string()));
            None
        }
    }
}

/// Sends every event the run commits to the run's watchers.
struct Broadcast(broadcast::Sender<StoredEvent>);

impl EventSink for Broadcast {
    fn event(&self, event: &StoredEvent) {
        // Nobody watching is fine.
        let _ = self.0.send(event.clone());
    }
}

/// A run composed and not started yet.
pub struct Prepared {
    ws: Workspace,
    store: Arc<dyn Connector>,
    deps: Deps,
    spec: RunSpec,
    /// Whether the goal loop drives it (else the Ralph loop).
    goal: bool,
    worktree: Option<Worktree>,
    /// A Ralph run's commit, made as it keeps its promise in a worktree.
    kept: Kept,
    cell: RunCell,
    notices: NoticeQueue,
    notice_grace: Duration,
    events: broadcast::Sender<StoredEvent>,
    by: String,
    observer: Arc<dyn Observer>,
    /// Ends what the run's children started, when the run ends (or this is dropped).
    lifetime: Arc<RunLifetime>,
}

impl Prepared {
    /// The store the run records in (a dashboard beside the run reads it).
    pub fn store(&self) -> Arc<dyn Connector> {
        self.store.clone()
    }

    /// The workspace the run works in: the checkout's, or its worktree's.
    pub fn workspace(&self) -> &Workspace {
        &self.deps.ws
    }

    /// The events the run will commit, from its first: subscribed before it starts, nothing is
    /// missed.
    pub fn events(&self) -> broadcast::Receiver<StoredEvent> {
        self.events.subscribe()
    }

    /// Starts driving the run as a task of `runtime`; the run goes on whether or not the
    /// handle is waited on, until it ends or is interrupted.
    pub fn start(self, runtime: &tokio::runtime::Handle) -> RunHandle {
        // Descendants of the agent that fork twice stay in this process's tree, where the
        // checks of human-only commands look for it.
        if let Err(e) = tether_core::subreaper::adopt_orphans() {
            tracing::warn!("could not become a child subreaper: {e}");
        }
        let interrupt = CancellationToken::new();
        let (run_tx, run_rx) = watch::channel(None);
        let store = self.store.clone();
        let ws = self.ws.clone();
        let task = runtime.spawn(self.drive(interrupt.clone(), run_tx));
        RunHandle {
            run: run_rx,
            interrupt,
            store,
            ws,
            task,
        }
    }

    /// The run's task: the notices delivered meanwhile, the loop (a Ralph run in a worktree
    /// commits its work inside it, before it is recorded completed), then the report, and the
    /// notices still queued delivered within their grace.
    async fn drive(
        self,
        interrupt: CancellationToken,
        run_tx: watch::Sender<Option<RunId>>,
    ) -> Result<Finished> {
        let stop = CancellationToken::new();
        let delivery = {
            let (desk, stop) = (self.deps.human.clone(), stop.clone());
            let queue = self.notices;
            tokio::spawn(async move { desk.deliver_notices(queue, stop).await })
        };
        let describe = self.deps.executor.describe();
        let cell = self.cell.clone();
        let observer = self.observer.clone();
        let known = |run: &RunId, resumed: bool| {
            if let Ok(mut c) = cell.lock() {
                *c = Some(run.clone());
            }
            run_tx.send_replace(Some(run.clone()));
            observer.started(Started {
                run,
                resumed,
                executor: &describe,
            });
        };
        let deps = &self.deps;
        let ended = match self.spec {
            RunSpec::Goal(spec) => goal::start(deps, spec, interrupt, |run| known(run, false))
                .await
                .map(|(run, end)| (run, End::Goal(end))),
            RunSpec::Ralph(spec) => ralph::start(deps, spec, interrupt, |run| known(run, false))
                .await
                .map(|(run, end)| (run, End::Ralph(end))),
            RunSpec::Resume(run) => {
                let opened = |run: &RunId| known(run, true);
                let end = if self.goal {
                    goal::resume(deps, &run, &self.by, interrupt, opened)
                        .await
                        .map(End::Goal)
                } else {
                    ralph::resume(deps, &run, &self.by, interrupt, opened)
                        .await
                        .map(End::Ralph)
                };
                end.map(|end| (run, end))
            }
        };
        // Nothing the agent started outlives the loop: not even what left its process group.
        self.lifetime.end();
        stop.cancel();
        if tokio::time::timeout(self.notice_grace, delivery)
            .await
            .is_err()
        {
            tracing::warn!("gave up delivering the run's last notices");
        }
        let (run, end) = ended?;
        let budget_spent = deps
            .journal
            .state(&run)
            .ok()
            .and_then(|state| state.budget_spent);
        let committed = self.kept.take();
        // The run's report beside its transcripts; a failure to write it never changes the
        // end. From the run's own store: tether.toml may name another by now.
        let report = crate::compose::report::write(
            &self.ws,
            &deps.journal,
            &run,
            (deps.git, &deps.env_remove),
        );
        let report = match report.await {
            Ok(written) => written.map(|(path, _)| path),
            Err(e) => {
                tracing::warn!("could not write the run's report: {e}");
                None
            }
        };
        Ok(Finished {
            run,
            end,
            budget_spent,
            worktree: self.worktree,
            committed,
            report,
        })
    }
}

/// How a loop ended.
#[derive(Debug, Clone)]
pub enum End {
    /// The goal loop's end.
    Goal(GoalEnd),
    /// The Ralph loop's end.
    Ralph(RalphEnd),
}

/// A run that ended, and what its end left.
#[derive(Debug)]
pub struct Finished {
    /// The run.
    pub run: RunId,
    /// How it ended.
    pub end: End,
    /// The budget it spent, when one stopped it.
    pub budget_spent: Option<SpentBudget>,
    /// Its worktree, when it has one (its branch holds the work).
    pub worktree: Option<Worktree>,
    /// The commit of a Ralph run's work on its branch, made as it kept its promise.
    pub committed: Option<Commit>,
    /// The report written beside its transcripts.
    pub report: Option<PathBuf>,
}

/// A run being driven: its id, interrupting or cancelling it, and its end.
pub struct RunHandle {
    run: watch::Receiver<Option<RunId>>,
    interrupt: CancellationToken,
    store: Arc<dyn Connector>,
    ws: Workspace,
    task: tokio::task::JoinHandle<Result<Finished>>,
}

impl RunHandle {
    /// The run's id, once known.
    pub fn run_id(&self) -> Option<RunId> {
        self.run.borrow().clone()
    }

    /// Waits until the run's id is known; `None` when the run ended before it was (it was
    /// refused).
    pub async fn started(&mut self) -> Option<RunId> {
        self.run.wait_for(Option::is_some).await.ok()?.clone()
    }

    /// The token that stops the run after its current step (the first Ctrl+C); it can be
    /// resumed.
    pub fn interrupter(&self) -> CancellationToken {
        self.interrupt.clone()
    }

    /// Cancels the run for good, as `by`, through its store (as `tether cancel` does): it
    /// stops now. Nothing happens before the run's id is known.
    pub fn cancel(&self, by: &str) -> Result<()> {
        let Some(id) = self.run_id() else {
            return Ok(());
        };
        let store = connect(&*self.store)?;
        let run = store.run(&id)?;
        tether_core::control::cancel(&store, &self.ws, &run, by)?;
        Ok(())
    }

    /// How the run ended.
    pub async fn finished(self) -> Result<Finished> {
        self.task.await.map_err(|e| Error::Task(e.to_string()))?
    }

    /// Waits until the run is under way — its id known, which the loop tells once it holds
    /// the run under its lock — or over: refused (the error), or ended at once.
    pub async fn begun(mut self) -> Result<Begun> {
        // Biased: a task that ended (refused, say) is taken at its word before the id it
        // dropped as it ended.
        let known = tokio::select! {
            biased;
            ended = &mut self.task => {
                let finished = ended.map_err(|e| Error::Task(e.to_string()))??;
                return Ok(Begun::Over(Box::new(finished)));
            }
            known = self.run.wait_for(Option::is_some) => known.ok().and_then(|id| id.clone()),
        };
        match known {
            Some(id) => Ok(Begun::Going(id, self)),
            // The task dropped its end of the id: it is ending; its end says how.
            None => Ok(Begun::Over(Box::new(self.finished().await?))),
        }
    }
}

/// A started run once it is under way or over ([`RunHandle::begun`]).
pub enum Begun {
    /// Under way: its id, and its handle.
    Going(RunId, RunHandle),
    /// Over already.
    Over(Box<Finished>),
}
