//! `tether schedule add | list | remove | pause | resume | run | install`: goals on a schedule
//! (see `tether_runtime::scheduler`). `run` is the scheduler in the foreground: Ctrl+C or
//! SIGTERM stops it, its runs after their current step (each resumable); a second stops
//! waiting for them.
//!
//! Adding, removing and resuming a schedule, running the scheduler and installing it are a
//! person's acts, refused inside an agent's process tree: each fire starts a run with a fresh
//! budget, so an agent that could schedule work could restart its own goal. Listing and pausing
//! stay open to agents, as `tether status` and `tether pause` do.

use std::sync::Arc;

use anyhow::{Result, anyhow};
use tether_core::schedule::Timing;
use tether_runtime::human_act::{HumanAct, require_human};
use tether_runtime::scheduler::{self, Listed, ScheduleError, Scheduler, Work};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::{ScheduleAddArgs, ScheduleCommand};
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether schedule …`.
pub fn run(ctx: &mut Ctx<'_>, command: &ScheduleCommand) -> Result<Exit> {
    if let Some(act) = human_act(command) {
        require_human(&ctx.ws, ctx.env, act)?;
    }
    match command {
        ScheduleCommand::Add(args) => add(ctx, args),
        ScheduleCommand::List(args) => {
            let listed = scheduler::list(&ctx.ws, ctx.env, tether_store::now_ms())?;
            if args.json {
                super::json(ctx.out, &listed)?;
            } else if listed.is_empty() {
                writeln!(ctx.out, "no schedule here (`tether schedule add` adds one)")?;
            } else {
                for l in &listed {
                    writeln!(ctx.out, "{}", line(l))?;
                }
            }
            Ok(Exit::Done)
        }
        ScheduleCommand::Remove(args) => {
            scheduler::remove(&ctx.ws, ctx.env, &args.name)?;
            writeln!(ctx.out, "removed schedule {}", args.name)?;
            Ok(Exit::Done)
        }
        ScheduleCommand::Pause(args) => {
            scheduler::set_paused(&ctx.ws, ctx.env, &args.name, true)?;
            writeln!(
                ctx.out,
                "paused schedule {0}; resume it with: tether schedule resume {0}",
                args.name
            )?;
            Ok(Exit::Done)
        }
        ScheduleCommand::Resume(args) => {
            scheduler::set_paused(&ctx.ws, ctx.env, &args.name, false)?;
            writeln!(ctx.out, "resumed schedule {}", args.name)?;
            Ok(Exit::Done)
        }
        ScheduleCommand::Run => run_scheduler(ctx),
        ScheduleCommand::Install(args) => {
            let exe = std::env::current_exe()
                .map_err(|e| anyhow!("cannot find tether's own executable: {e}"))?;
            let root = scheduler::key_of(&ctx.ws);
            let text = if args.crontab {
                scheduler::crontab_line(&root, &exe)
            } else {
                scheduler::systemd_unit(&root, &exe)
            }
            .map_err(Failure::usage)?;
            write!(ctx.out, "{text}")?;
            Ok(Exit::Done)
        }
    }
}

/// The act only a person may do that `command` is, if it is one.
fn human_act(command: &ScheduleCommand) -> Option<HumanAct> {
    match command {
        ScheduleCommand::Add(_) => Some(HumanAct::AddSchedule),
        ScheduleCommand::Remove(_) => Some(HumanAct::RemoveSchedule),
        ScheduleCommand::Resume(_) => Some(HumanAct::ResumeSchedule),
        ScheduleCommand::Run => Some(HumanAct::RunScheduler),
        ScheduleCommand::Install(_) => Some(HumanAct::InstallScheduler),
        ScheduleCommand::List(_) | ScheduleCommand::Pause(_) => None,
    }
}

/// `tether schedule add`.
fn add(ctx: &mut Ctx<'_>, args: &ScheduleAddArgs) -> Result<Exit> {
    let now = tether_store::now_ms();
    let (flag, timing) = match (&args.every, &args.cron) {
        (Some(every), _) => ("--every", Timing::every(every)),
        (None, Some(cron)) => ("--cron", Timing::cron(cron)),
        (None, None) => return Err(Failure::usage(anyhow!("give --every or --cron"))),
    };
    // A timing that names no time to come would never fire: refused, not kept silently.
    let timing = timing
        .and_then(|timing| timing.to_come(now))
        .map_err(|problem| Failure::usage(ScheduleError::Timing { flag, problem }))?;
    let work = match (&args.goal, &args.ralph) {
        (Some(goal), _) => Work::Goal {
            goal: goal.clone(),
            max_iterations: args.max_iterations,
            worktree: args.worktree,
        },
        (None, Some(prompt)) => Work::Ralph {
            prompt: prompt.clone(),
            completion_promise: args.completion_promise.clone().unwrap_or_default(),
            max_iterations: args.max_iterations,
            worktree: args.worktree,
        },
        (None, None) => return Err(Failure::usage(anyhow!("give --goal or --ralph"))),
    };
    scheduler::add(&ctx.ws, ctx.env, &args.name, &timing, &work)?;
    writeln!(
        ctx.out,
        "added schedule {}: {}, {}; `tether schedule run` fires it",
        args.name,
        timing.describe(),
        work.describe()
    )?;
    Ok(Exit::Done)
}

/// One schedule on one line: name, timing, next fire, last outcome, failures, state.
fn line(l: &Listed) -> String {
    let state = match (l.paused, l.firing, l.overdue) {
        (true, _, _) => "paused",
        (false, true, _) => "firing",
        (false, false, true) => "overdue",
        (false, false, false) => "waiting",
    };
    let next = l.next_fire.as_deref().unwrap_or("-");
    let last = l.last_outcome.as_deref().unwrap_or("-");
    format!(
        "{}  {}  {state}  next: {next}  last: {}  failures in a row: {}",
        l.name,
        l.timing,
        tether_human::visible::one_line(last),
        l.consecutive_failures
    )
}

/// `tether schedule run`: the scheduler until Ctrl+C or SIGTERM.
fn run_scheduler(ctx: &mut Ctx<'_>) -> Result<Exit> {
    // Fails early, naming the problem, on a tether.toml or store that cannot be read.
    scheduler::list(&ctx.ws, ctx.env, tether_store::now_ms()).map_err(Failure::usage)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let env = Arc::new(tether_config::ProcessEnv);
    let (stop, now) = (CancellationToken::new(), CancellationToken::new());
    runtime.block_on(async {
        tokio::spawn(on_signals([stop.clone(), now.clone()]));
        let said: scheduler::Said =
            Arc::new(|line: &str| eprintln!("{}", tether_human::visible::visible(line)));
        let scheduler = Scheduler::new(ctx.ws.clone(), env, crate::bridged::host(), said)?;
        eprintln!(
            "scheduler for {}: Ctrl+C stops it",
            scheduler::key_of(&ctx.ws).display()
        );
        scheduler.run(stop.clone(), now).await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_background();
    Ok(Exit::Interrupted)
}

/// Cancels each token in turn at each Ctrl+C or SIGTERM: the first stops the scheduler, the
/// second stops waiting for its runs.
async fn on_signals(tokens: [CancellationToken; 2]) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    for (n, token) in tokens.into_iter().enumerate() {
        let terminated = async {
            match term.as_mut() {
                Some(t) => drop(t.recv().await),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = terminated => {}
        }
        if n == 0 {
            eprintln!("stopping the scheduler and its runs after their current step…");
        }
        token.cancel();
    }
}
