//! Driving a loop in the foreground, shared by `tether ralph`, `tether run` and `tether resume`:
//! the runtime composes and drives the run ([`tether_runtime::launch`]); this is the terminal's
//! side of it — the event sinks (`--events jsonl`, the progress line on a TTY), the dashboard
//! beside the run, Ctrl+C (the first one stops after the current step, the second exits at
//! once), and the closing lines.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tether_config::{Config, Workspace};
use tether_core::bounds::Pinned;
use tether_human::Console;
use tether_runtime::launch::{
    End, Finished, Launch, Note, Observer, Place, RunSpec, Settles, Started,
};
use tether_store::{EventSink, RunId};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::EventsFormat;
use crate::exit::Exit;
use crate::sinks::{Jsonl, Progress};

/// How a foreground run is shown.
pub struct Shown {
    /// Names the progress line (`ralph`, `run`).
    pub label: &'static str,
    /// The iteration budget the progress line shows.
    pub max: Option<u32>,
    /// How the line announcing a new run begins (`goal run`), and what it says after the run
    /// id (the plan, the budget, ...).
    pub banner: (&'static str, String),
    /// `--events`.
    pub events: Option<EventsFormat>,
}

/// A run about to be driven in the foreground: its tokio runtime and its prepared parts.
pub struct Foreground {
    runtime: tokio::runtime::Runtime,
    prepared: tether_runtime::launch::Prepared,
    progress: Option<Arc<Progress>>,
    events: Option<EventsFormat>,
    config: Config,
}

/// Composes the run `spec` from `config` (the configuration `bounds` records), placed as
/// `place` says: every configuration problem is found here,
/// before the run starts.
pub fn prepare(
    ctx: &Ctx<'_>,
    (config, bounds): (Config, Pinned),
    spec: RunSpec,
    place: Place,
    shown: Shown,
) -> Result<Foreground> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = Progress::for_terminal(shown.label, shown.max).map(Arc::new);
    let mut sinks: Vec<Arc<dyn EventSink>> = Vec::new();
    if shown.events == Some(EventsFormat::Jsonl) {
        sinks.push(Arc::new(Jsonl));
    }
    if let Some(p) = &progress {
        sinks.push(p.clone());
    }
    let launch = launch(
        ctx,
        (config.clone(), bounds),
        (spec, place),
        sinks,
        shown.banner,
    );
    let prepared = runtime.block_on(launch.prepare(ctx.env))?;
    Ok(Foreground {
        runtime,
        prepared,
        progress,
        events: shown.events,
        config,
    })
}

/// The run `spec` from `config` (the configuration `bounds` records), placed as `place` says,
/// its events to `sinks`, what it tells besides printed on the terminal (its first line
/// beginning with `banner`).
pub fn launch(
    ctx: &Ctx<'_>,
    (config, bounds): (Config, Pinned),
    (spec, place): (RunSpec, Place),
    sinks: Vec<Arc<dyn EventSink>>,
    banner: (&'static str, String),
) -> Launch {
    let console = Console::detect(|| tether_human::person::name(&config.human, ctx.env));
    Launch {
        ws: ctx.ws.clone(),
        config,
        bounds,
        spec,
        place,
        placement: None,
        sinks,
        console,
        by: "cli".to_owned(),
        notice_grace: tether_runtime::process::notice_grace(ctx.env),
        observer: Arc::new(Terminal { banner }),
        host: crate::bridged::host(),
        pool: None,
    }
}

/// What the terminal is told besides a run's events, its first line beginning with `banner`.
pub fn terminal(banner: (&'static str, String)) -> Arc<dyn Observer> {
    Arc::new(Terminal { banner })
}

/// What the terminal is told besides the events.
struct Terminal {
    banner: (&'static str, String),
}

impl Observer for Terminal {
    fn started(&self, s: Started<'_>) {
        if s.resumed {
            eprintln!("resuming run {} · {}", s.run, s.executor);
        } else {
            let (what, banner) = &self.banner;
            eprintln!("{what} {} · {banner} · {}", s.run, s.executor);
        }
    }

    fn note(&self, note: Note) {
        match note {
            Note::LoopJudgeOff(e) => eprintln!("warning: the loop judge is off: {e}"),
            Note::GoalCommitted { goal, commit } => eprintln!(
                "committed goal {goal} on {} ({})",
                commit.branch,
                commit.short()
            ),
            Note::GoalMerged { goal, branch, .. } => eprintln!("merged goal {goal} into {branch}"),
            Note::MergeConflict {
                goal,
                paths,
                settles,
            } => eprintln!(
                "goal {goal} conflicts with the run's branch in {}: {}",
                paths.join(", "),
                match settles {
                    Settles::Agent => "its agent settles it",
                    Settles::Person => "a person is asked",
                }
            ),
        }
    }
}

/// Drives the run to its end and reports it: on stdout, or on stderr when stdout carries
/// `--events`; `report` words the end and picks the exit code.
pub fn drive(
    ctx: &mut Ctx<'_>,
    fg: Foreground,
    report: impl FnOnce(&Workspace, &RunId, &End, Instant) -> (String, Exit),
) -> Result<Exit> {
    let Foreground {
        runtime,
        prepared,
        progress,
        events,
        config,
    } = fg;
    let web = super::serve::Dashboard::bind(prepared.store(), prepared.workspace(), &config);
    let began = Instant::now();
    let finished = runtime.block_on(async {
        if let Some(web) = web {
            eprintln!("dashboard: {}", web.url());
            web.spawn(CancellationToken::new());
        }
        let handle = prepared.start(&tokio::runtime::Handle::current());
        tokio::spawn(watch_ctrl_c(handle.interrupter()));
        if let Some(p) = progress.clone() {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    p.draw();
                }
            });
        }
        handle.finished().await
    });
    runtime.shutdown_background();
    if let Some(p) = &progress {
        p.clear();
    }
    let finished = finished?;
    let exit = closing(
        ctx,
        &finished,
        events,
        report(&ctx.ws, &finished.run, &finished.end, began),
    )?;
    Ok(exit)
}

/// The closing lines: how the run ended (with how to go on when a budget stopped it), its
/// commit and branch when it has a worktree, and where its report is.
fn closing(
    ctx: &mut Ctx<'_>,
    finished: &Finished,
    events: Option<EventsFormat>,
    (mut line, exit): (String, Exit),
) -> Result<Exit> {
    let run = &finished.run;
    if exit == Exit::Budget
        && let Some(spent) = &finished.budget_spent
        && tether_runtime::budget::needs_raise(spent)
    {
        let hint = tether_runtime::budget::go_on_hint(run.as_str(), spent);
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
    if let Some(tree) = &finished.worktree {
        if let Some(commit) = &finished.committed {
            eprintln!(
                "committed the run's work on {} ({})",
                commit.branch,
                commit.short()
            );
        }
        eprintln!(
            "branch {branch} (worktree {dir}): merge it with `git merge {branch}`",
            branch = tree.branch,
            dir = tree.dir.display()
        );
    }
    if let Some(path) = &finished.report {
        eprintln!("report: {}", ctx.ws.display(path));
    }
    Ok(exit)
}

/// Interrupts after the current step on the first Ctrl+C, exits at once on the second.
pub async fn watch_ctrl_c(interrupt: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("\ninterrupting after the current step… (Ctrl+C again to exit now)");
        interrupt.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(Exit::Interrupted.code()));
        }
    }
}
