//! `tether run`: the goal loop in the foreground (a goal run is resumed by `tether resume`).

use std::future::Future;
use std::time::Instant;

use anyhow::{Result, anyhow};
use tether_config::{Config, Workspace};
use tether_core::goal::{self, Deps, GoalEnd, GoalSpec, LoopError, RuleSettings};
use tether_core::human_act::HumanAct;
use tether_core::ralph::MAX_ITERATIONS_CEILING;
use tether_store::{RunCell, RunId};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use super::foreground::{self, Loop, Parts, Start};
use crate::cli::RunArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// Judge failures in a row that pause a run.
const JUDGE_FAILURES: u32 = 3;

/// `tether run`.
pub fn run(ctx: &mut Ctx<'_>, args: &RunArgs) -> Result<Exit> {
    if args.no_judge {
        super::require_human(ctx, HumanAct::RunWithoutJudge)?;
    }
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
    let mut spec = spec(&config, (max != 0).then_some(max), args.no_judge);
    spec.budget = super::budget::from_flags(&config.r#loop, &args.budget);
    let cell = RunCell::default();
    let start = Start::New(spec);
    let bounds = super::settings::for_new_run(ctx, &config);
    let parts = Parts::new::<GoalLoop>(
        &ctx.ws,
        ctx.env,
        (&config, bounds),
        &start,
        (args.events, args.place),
        |ws, journal, human| {
            let env = ctx.env;
            crate::executor::for_goal_loop(&config, ws, env, journal, human, &cell, args.no_judge)
        },
    )?;
    // Configuration problems first, so nobody is asked to approve contracts for a run that
    // cannot start.
    super::plan::ensure_approved(ctx, args.approve)?;
    foreground::drive::<GoalLoop>(ctx, parts, &cell, start, args.events)
}

/// The run's spec from the configuration.
fn spec(config: &Config, max_iterations: Option<u32>, no_judge: bool) -> GoalSpec {
    let l = &config.r#loop;
    GoalSpec {
        plan: config.plan.to_string_lossy().into_owned(),
        max_iterations,
        budget: config.r#loop.budget,
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
    }
}

/// The goal loop in the foreground.
pub struct GoalLoop;

impl Loop for GoalLoop {
    type Spec = GoalSpec;
    type End = GoalEnd;
    const LABEL: &'static str = "run";
    const COMMITS_WHEN_DONE: bool = false;

    fn max_iterations(spec: &GoalSpec) -> Option<u32> {
        spec.max_iterations
    }

    fn banner(spec: &GoalSpec) -> (&'static str, String) {
        let budget = spec.max_iterations.map_or_else(
            || "no limit".to_owned(),
            |m| format!("up to {m} iterations"),
        );
        ("goal run", format!("{} · {budget}", spec.plan))
    }

    fn start(
        deps: &Deps,
        spec: GoalSpec,
        interrupt: CancellationToken,
        on_start: impl FnOnce(&RunId),
    ) -> impl Future<Output = Result<(RunId, GoalEnd), LoopError>> {
        goal::start(deps, spec, interrupt, on_start)
    }

    fn resume(
        deps: &Deps,
        run: &RunId,
        interrupt: CancellationToken,
    ) -> impl Future<Output = Result<GoalEnd, LoopError>> {
        goal::resume(deps, run, "cli", interrupt)
    }

    fn report(_: &Workspace, run: &RunId, end: &GoalEnd, began: Instant) -> (String, Exit) {
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
                (
                    format!(
                        "all goals done: run {run} completed after {iteration} iteration(s) in {:.0?} · {goals}",
                        began.elapsed()
                    ),
                    Exit::Done,
                )
            }
            GoalEnd::BudgetSpent { iteration } => (
                format!("budget spent after iteration {iteration}; {resume}"),
                Exit::Budget,
            ),
            GoalEnd::Blocked { rule, reason } => (
                format!("run {run} blocked ({rule}): {reason}; {resume}"),
                Exit::Paused,
            ),
            GoalEnd::Paused { reason } => (
                format!("run {run} paused: {reason}; {resume}"),
                Exit::Paused,
            ),
            GoalEnd::CannotRun { iteration, error } => (
                format!("stopped at iteration {iteration}: {error}"),
                Exit::Error,
            ),
            GoalEnd::Failed { iteration, error } => (
                format!(
                    "stopped: iteration {iteration} was the last of several failures in a row: {error}"
                ),
                Exit::Error,
            ),
            GoalEnd::Cancelled => (format!("run {run} cancelled"), Exit::Interrupted),
            GoalEnd::Interrupted => (
                format!("run {run} interrupted; {resume}"),
                Exit::Interrupted,
            ),
        }
    }
}
