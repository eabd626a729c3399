//! Driving a loop in the foreground, shared by `tether ralph`, `tether run` and `tether resume`:
//! the loop's parts ([`Parts`]: the process's one store connection, its human desk, the
//! executor), starting or resuming the run and reporting how it ended ([`drive`], for any
//! [`Loop`]), the runtime, the event sinks (`--events jsonl`, the progress line on a TTY, the
//! notices `[notify]` sends to the channels), and Ctrl+C (the first one stops after the current
//! step, the second exits at once).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tether_agent::Executor;
use tether_config::{Config, Env, Workspace};
use tether_core::bounds::Pinned;
use tether_core::looping::{Deps, LoopError, UsageWaits};
use tether_human::{Console, Desk, NoticeQueue, NoticeSink};
use tether_store::{EventSink, Journal, RunCell, RunId};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::EventsFormat;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::sinks::{Jsonl, Progress};

/// A loop the binary drives in the foreground: what differs between `tether ralph` and
/// `tether run` around the shared [`drive`].
pub trait Loop {
    /// The run's parameters.
    type Spec;
    /// How a run ends.
    type End;
    /// Names the progress line (`ralph`, `run`).
    const LABEL: &'static str;
    /// Whether a run in a worktree commits its changes when it ends done (a loop with no
    /// goals to sign off, each committed as it is).
    const COMMITS_WHEN_DONE: bool;

    /// The budget.
    fn max_iterations(spec: &Self::Spec) -> Option<u32>;
    /// How the line announcing a new run begins (`goal run`), and what it says after the run
    /// id (the plan, the budget, ...).
    fn banner(spec: &Self::Spec) -> (&'static str, String);
    /// Starts a new run; `on_start` is told its id before the first iteration.
    fn start(
        deps: &Deps,
        spec: Self::Spec,
        interrupt: CancellationToken,
        on_start: impl FnOnce(&RunId),
    ) -> impl Future<Output = Result<(RunId, Self::End), LoopError>>;
    /// Resumes a stopped run.
    fn resume(
        deps: &Deps,
        run: &RunId,
        interrupt: CancellationToken,
    ) -> impl Future<Output = Result<Self::End, LoopError>>;
    /// The closing line and the exit code.
    fn report(ws: &Workspace, run: &RunId, end: &Self::End, began: Instant) -> (String, Exit);
}

/// Which run a foreground loop drives.
pub enum Start<S> {
    /// A new run with this spec.
    New(S),
    /// A stopped run, taken up again.
    Resume(RunId),
}

/// What a loop runs with in this process: one store connection (with the loop's sinks) shared
/// by the loop, the agent's tools and the human desk; the desk (the terminal when stdin and
/// stderr are a person); and the executor asking there.
pub struct Parts {
    fg: Foreground,
    deps: Deps,
    web: Option<super::serve::Dashboard>,
    worktree: Option<tether_worktree::Worktree>,
    /// Commit in the worktree (`--commit`), with the user's git hooks or not.
    commit: (bool, bool),
}

impl Parts {
    /// The parts of a loop `L` on `start` from `config` (holding the settings that bound the
    /// agent as `bounds` has them), in a worktree of its own when `place` says so (a new run)
    /// or the resumed run has one; `executor` builds the executor for the run's workspace over
    /// the store and the desk.
    pub fn new<L: Loop>(
        ws: &Workspace,
        env: &dyn Env,
        (config, bounds): (&Config, Pinned),
        start: &Start<L::Spec>,
        (events, place): (Option<EventsFormat>, crate::cli::PlaceArgs),
        executor: impl FnOnce(&Workspace, &Journal, &Desk) -> Result<Arc<dyn Executor>>,
    ) -> Result<Parts> {
        let store = crate::store::connector(ws, env)?;
        let max = match start {
            Start::New(spec) => L::max_iterations(spec),
            // The run's iteration budget now, with what people added (0: unlimited).
            Start::Resume(run) => store
                .connect()?
                .run(run)
                .ok()
                .and_then(|r| r.limits().iterations)
                .filter(|m| *m > 0),
        };
        let fg = Foreground::new(L::LABEL, max, events, config, super::notice_grace(env))?;
        let journal = Journal::new(store.connect()?, fg.sinks.clone())?;
        let placement = match start {
            Start::New(_) if place.worktree || config.run.worktree => fg
                .runtime
                .block_on(crate::worktree::for_new_run(ws, config))
                .map_err(Failure::usage)?,
            Start::New(_) => crate::worktree::Placement::in_place(ws),
            Start::Resume(run) => {
                let record = journal.store().run(run)?;
                fg.runtime
                    .block_on(crate::worktree::for_resumed_run(ws, &record))
                    .map_err(Failure::usage)?
            }
        };
        let isolation = placement.isolation(&journal, config, place.commit);
        let ws = &placement.ws;
        let human = Desk::from_config(
            config,
            ws,
            journal.clone(),
            Console::detect(|| tether_human::person::name(&config.human, env)),
        );
        let executor = executor(ws, &journal, &human)?;
        let deps = Deps {
            ws: ws.clone(),
            journal,
            executor,
            human,
            usage: UsageWaits::from_config(&config.executor),
            price: config.model.as_ref().and_then(|m| m.price),
            loop_judge: loop_judge(config, env),
            env_remove: config.key_vars(),
            isolation,
            bounds: Some(Arc::new(bounds)),
        };
        let web = super::serve::Dashboard::bind(store, ws, config);
        Ok(Parts {
            fg,
            deps,
            web,
            worktree: placement.worktree,
            commit: (place.commit, config.run.commit_hooks),
        })
    }
}

/// Drives the loop `L` in the foreground with `parts` to its end and reports it: on stdout,
/// or on stderr when stdout carries `--events`. The run's id goes into `cell` (for the
/// executor's `ask_human`) as soon as it is known.
pub fn drive<L: Loop>(
    ctx: &mut Ctx<'_>,
    parts: Parts,
    cell: &RunCell,
    start: Start<L::Spec>,
    events: Option<EventsFormat>,
) -> Result<Exit> {
    let Parts {
        mut fg,
        deps,
        web,
        worktree,
        commit,
    } = parts;
    let notices = fg.notices.take().map(|queue| (queue, deps.human.clone()));
    let describe = deps.executor.describe();
    // Descendants of the agent that fork twice stay in this process's tree, where the checks
    // of human-only commands look for it.
    if let Err(e) = tether_core::subreaper::adopt_orphans() {
        tracing::warn!("could not become a child subreaper: {e}");
    }
    let began = Instant::now();
    let set_cell = |run: &RunId| {
        if let Ok(mut c) = cell.lock() {
            *c = Some(run.clone());
        }
    };
    let (run, end) = fg
        .run(notices, |interrupt| async {
            if let Some(web) = web {
                eprintln!("dashboard: {}", web.url());
                web.spawn(CancellationToken::new());
            }
            match start {
                Start::New(spec) => {
                    let (what, banner) = L::banner(&spec);
                    L::start(&deps, spec, interrupt, |run| {
                        set_cell(run);
                        eprintln!("{what} {run} · {banner} · {describe}");
                    })
                    .await
                }
                Start::Resume(run) => {
                    set_cell(&run);
                    eprintln!("resuming run {run} · {describe}");
                    L::resume(&deps, &run, interrupt).await.map(|e| (run, e))
                }
            }
        })
        .map_err(|e| match e {
            LoopError::Store(_) => anyhow::Error::new(e),
            // Asking for something that cannot be done (the run ended, another process drives
            // it, the plan needs fixing) is a usage error, not a failure of tether.
            _ => Failure::usage(e),
        })?;
    let (mut line, exit) = L::report(&ctx.ws, &run, &end, began);
    if exit == Exit::Budget
        && let Ok(state) = deps.journal.state(&run)
        && let Some(spent) = &state.budget_spent
        && (spent.goal_id.is_some() || spent.overrun.unit != tether_store::Unit::Iterations)
    {
        let hint = super::budget::go_on_hint(run.as_str(), spent);
        line = format!(
            "run {run} stopped: {}; go on with: {hint}",
            spent.describe()
        );
    }
    // The ending quotes the agent (its error, a rule's reason).
    let line = tether_human::visible::visible(&line);
    if events.is_some() {
        eprintln!("{line}");
    } else {
        writeln!(ctx.out, "{line}")?;
    }
    if let Some(tree) = &worktree {
        if L::COMMITS_WHEN_DONE && exit == Exit::Done && commit.0 {
            crate::worktree::commit_when_done(tree, &deps.journal, &run, commit.1);
        }
        eprintln!(
            "branch {branch} (worktree {dir}): merge it with `git merge {branch}`",
            branch = tree.branch,
            dir = tree.dir.display()
        );
    }
    // The run's report beside its transcripts; a failure to write it never changes the end.
    // From the run's own store: tether.toml may name another by now.
    let report =
        super::control::write_report_from(ctx, &deps.journal.store(), &run, &deps.env_remove);
    match report {
        Ok(Some((path, _))) => eprintln!("report: {}", ctx.ws.display(&path)),
        Ok(None) => {}
        Err(e) => tracing::warn!("could not write the run's report: {e:#}"),
    }
    Ok(exit)
}

/// A loop about to run in this process.
struct Foreground {
    runtime: tokio::runtime::Runtime,
    progress: Option<Arc<Progress>>,
    sinks: Vec<Arc<dyn EventSink>>,
    /// What the notice sink queues, until the run's desk delivers it.
    notices: Option<NoticeQueue>,
    /// How long the end of the run waits for its last notices to be delivered.
    grace: Duration,
}

impl Foreground {
    /// Sets up for a `label` loop (`ralph`, `run`) with budget `max`, sending the notices
    /// `config`'s `[notify]` describes.
    fn new(
        label: &str,
        max: Option<u32>,
        events: Option<EventsFormat>,
        config: &Config,
        grace: Duration,
    ) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let progress = Progress::for_terminal(label, max).map(Arc::new);
        let mut sinks: Vec<Arc<dyn EventSink>> = Vec::new();
        if events == Some(EventsFormat::Jsonl) {
            sinks.push(Arc::new(Jsonl));
        }
        if let Some(p) = &progress {
            sinks.push(p.clone());
        }
        let (notice_sink, notices) = NoticeSink::new(&config.notify);
        sinks.push(Arc::new(notice_sink));
        Ok(Foreground {
            runtime,
            progress,
            sinks,
            notices: Some(notices),
            grace,
        })
    }

    /// Runs the loop `body` to its end; it gets the token Ctrl+C cancels. `notices` are
    /// delivered by their desk meanwhile, and those still queued when the loop ends before
    /// this returns (for at most its grace: [`tether_human::DELIVERY_GRACE`]).
    fn run<F: Future>(
        self,
        notices: Option<(NoticeQueue, Desk)>,
        body: impl FnOnce(CancellationToken) -> F,
    ) -> F::Output {
        let interrupt = CancellationToken::new();
        let progress = self.progress.clone();
        let out = self.runtime.block_on(async {
            let stop = CancellationToken::new();
            let delivery = notices.map(|(queue, desk)| {
                let stop = stop.clone();
                tokio::spawn(async move { desk.deliver_notices(queue, stop).await })
            });
            tokio::spawn(watch_ctrl_c(interrupt.clone()));
            if let Some(p) = progress.clone() {
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        p.draw();
                    }
                });
            }
            let out = body(interrupt).await;
            stop.cancel();
            if let Some(delivery) = delivery
                && tokio::time::timeout(self.grace, delivery).await.is_err()
            {
                tracing::warn!("gave up delivering the run's last notices");
            }
            out
        });
        self.runtime.shutdown_background();
        if let Some(p) = &self.progress {
            p.clear();
        }
        out
    }
}

async fn watch_ctrl_c(interrupt: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("\ninterrupting after the current step… (Ctrl+C again to exit now)");
        interrupt.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(Exit::Interrupted.code()));
        }
    }
}

/// The loop judge `[loop_judge]` describes, if any. One that cannot be set up (its key unset)
/// is left out with a warning: it is advisory, so the run goes on without it.
fn loop_judge(config: &Config, env: &dyn Env) -> Option<tether_core::loop_judge::LoopJudge> {
    let settings = config.loop_judge.as_ref()?;
    match tether_core::loop_judge::LoopJudge::from_config(settings, env) {
        Ok(judge) => Some(judge),
        Err(e) => {
            tracing::warn!("the loop judge is off: {e}");
            eprintln!("warning: the loop judge is off: {e}");
            None
        }
    }
}
