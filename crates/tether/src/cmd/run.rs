//! `tether run` (and `tether resume` of a goal run): the goal loop in the foreground, and
//! `tether say`.

use std::time::Instant;

use anyhow::{Result, anyhow};
use tether_config::Config;
use tether_core::control::{self, Control};
use tether_core::goal::{self, Deps, GoalEnd, GoalError, GoalSpec, RuleSettings};
use tether_core::ralph::MAX_ITERATIONS_CEILING;
use tether_human::Desk;
use tether_store::RunCell;
use tether_store::{Journal, RunId, Store};

use super::Ctx;
use super::foreground::Foreground;
use crate::cli::{EventsFormat, RunArgs, SayArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// Judge failures in a row that pause a run.
const JUDGE_FAILURES: u32 = 3;

/// `tether run`.
pub fn run(ctx: &mut Ctx<'_>, args: &RunArgs) -> Result<Exit> {
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let mut config = loaded.config;
    let max = args.max_iterations.unwrap_or(config.r#loop.max_iterations);
    if max > MAX_ITERATIONS_CEILING {
        return Err(Failure::usage(anyhow!(
            "--max-iterations {max} is above the ceiling of {MAX_ITERATIONS_CEILING}"
        )));
    }
    if max == 0 {
        eprintln!(
            "warning: --max-iterations 0: no iteration limit; stop the run with Ctrl+C or \
             `tether cancel`"
        );
    }
    if let Some(t) = args.threshold {
        config.human.threshold = t;
    }
    let spec = spec(&config, (max != 0).then_some(max), args.no_judge);
    let fg = Foreground::new("run", spec.max_iterations, args.events)?;
    let cell = RunCell::default();
    let (journal, human) = fg.human_side(&ctx.ws, &config)?;
    let deps = deps(ctx, &config, (journal, human), &cell, args.no_judge)?;
    // Configuration problems first, so nobody is asked to approve contracts for a run that
    // cannot start.
    super::plan::ensure_approved(ctx, args.approve)?;
    drive(ctx, fg, deps, &cell, Start::New(spec), args.events)
}

/// The loop's parts: the process's one store connection and its human desk, and the executor
/// asking there.
fn deps(
    ctx: &Ctx<'_>,
    config: &Config,
    (journal, human): (Journal, Desk),
    cell: &RunCell,
    no_judge: bool,
) -> Result<Deps> {
    let executor =
        crate::executor::for_goal_loop(config, &ctx.ws, ctx.env, &journal, &human, cell, no_judge)?;
    Ok(Deps {
        ws: ctx.ws.clone(),
        journal,
        executor,
        human,
    })
}

/// The run's spec from the configuration.
fn spec(config: &Config, max_iterations: Option<u32>, no_judge: bool) -> GoalSpec {
    let l = &config.r#loop;
    GoalSpec {
        plan: config.plan.to_string_lossy().into_owned(),
        max_iterations,
        threshold: config.human.threshold,
        no_judge,
        rules: RuleSettings {
            spin_guard: l.spin_guard,
            oscillation_repeats: l.oscillation_repeats,
            reminder_after: l.reminder_after,
            clean_end_reminders: l.clean_end_reminders,
            judge_failures: JUDGE_FAILURES,
            asking_allowed: config.human.threshold > 0,
        },
        max_consecutive_failures: l.max_consecutive_failures,
    }
}

/// `tether resume` of a goal run.
pub fn resume(ctx: &mut Ctx<'_>, run: RunId, events: Option<EventsFormat>) -> Result<Exit> {
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let fg = Foreground::new("run", None, events)?;
    let cell = RunCell::default();
    let (journal, human) = fg.human_side(&ctx.ws, &loaded.config)?;
    let record = journal.store().run(&run)?;
    let no_judge = record
        .spec
        .get("no_judge")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let deps = deps(ctx, &loaded.config, (journal, human), &cell, no_judge)?;
    drive(ctx, fg, deps, &cell, Start::Resume(run), events)
}

enum Start {
    New(GoalSpec),
    Resume(RunId),
}

fn drive(
    ctx: &mut Ctx<'_>,
    fg: Foreground,
    deps: Deps,
    cell: &RunCell,
    start: Start,
    events: Option<EventsFormat>,
) -> Result<Exit> {
    let describe = deps.executor.describe();
    let began = Instant::now();
    let set_cell = |run: &RunId| {
        if let Ok(mut c) = cell.lock() {
            *c = Some(run.clone());
        }
    };
    let (run, end) = fg
        .run(|interrupt| async {
            match start {
                Start::New(spec) => {
                    let (plan, max) = (spec.plan.clone(), spec.max_iterations);
                    goal::start(&deps, spec, interrupt, |run| {
                        set_cell(run);
                        let budget = max.map_or_else(
                            || "no limit".to_owned(),
                            |m| format!("up to {m} iterations"),
                        );
                        eprintln!("goal run {run} · {plan} · {budget} · {describe}");
                    })
                    .await
                }
                Start::Resume(run) => {
                    set_cell(&run);
                    eprintln!("resuming run {run} · {describe}");
                    goal::resume(&deps, &run, "cli", interrupt)
                        .await
                        .map(|e| (run, e))
                }
            }
        })
        .map_err(|e| match e {
            GoalError::Store(_) => anyhow::Error::new(e),
            _ => Failure::usage(e),
        })?;
    let line = report(&run, &end, began);
    if events.is_some() {
        eprintln!("{line}");
    } else {
        writeln!(ctx.out, "{line}")?;
    }
    Ok(exit(&end))
}

fn report(run: &RunId, end: &GoalEnd, began: Instant) -> String {
    let resume = format!("continue with: tether resume {run}");
    match end {
        GoalEnd::AllDone {
            iteration,
            signed_off,
        } => {
            let goals = if signed_off.is_empty() {
                "no goal needed signing off".to_owned()
            } else {
                format!("signed off: {}", signed_off.join(", "))
            };
            format!(
                "all goals done: run {run} completed after {iteration} iteration(s) in {:.0?} · {goals}",
                began.elapsed()
            )
        }
        GoalEnd::BudgetSpent { iteration } => {
            format!("budget spent after iteration {iteration}; {resume}")
        }
        GoalEnd::Blocked { rule, reason } => {
            format!("run {run} blocked ({rule}): {reason}; {resume}")
        }
        GoalEnd::Paused { reason } => format!("run {run} paused: {reason}; {resume}"),
        GoalEnd::Failed { iteration, error } => format!(
            "stopped: iteration {iteration} was the last of several failures in a row: {error}"
        ),
        GoalEnd::Cancelled => format!("run {run} cancelled"),
        GoalEnd::Interrupted => format!("run {run} interrupted; {resume}"),
    }
}

fn exit(end: &GoalEnd) -> Exit {
    match end {
        GoalEnd::AllDone { .. } => Exit::Done,
        GoalEnd::BudgetSpent { .. } => Exit::Budget,
        GoalEnd::Blocked { .. } | GoalEnd::Paused { .. } => Exit::Paused,
        GoalEnd::Failed { .. } => Exit::Error,
        GoalEnd::Cancelled | GoalEnd::Interrupted => Exit::Interrupted,
    }
}

/// `tether say`.
pub fn say(ctx: &mut Ctx<'_>, args: &SayArgs) -> Result<Exit> {
    let store = Store::open(ctx.ws.db_path())?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let by = std::env::var("USER").unwrap_or_else(|_| "user".to_owned());
    match control::say(&store, &run, &args.message, &by)? {
        Control::Unchanged(status) => Err(Failure::usage(anyhow!(
            "run {} has ended ({}); a message can only go to a run that can continue",
            run.id,
            status.as_str()
        ))),
        _ => {
            writeln!(
                ctx.out,
                "message queued for run {}: delivered at the start of its next iteration",
                run.id
            )?;
            Ok(Exit::Done)
        }
    }
}
