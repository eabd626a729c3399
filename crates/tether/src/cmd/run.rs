//! `tether run`: the goal loop in the foreground (a goal run is resumed by `tether resume`).

use std::time::Instant;

use anyhow::{Result, anyhow};
use tether_config::Workspace;
use tether_core::goal::GoalEnd;
use tether_core::ralph::MAX_ITERATIONS_CEILING;
use tether_runtime::human_act::{HumanAct, require_human};
use tether_runtime::launch::{End, Place, RunSpec};
use tether_store::RunId;

use super::Ctx;
use super::foreground::{self, Shown};
use super::stopped;
use crate::cli::RunArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether run`.
pub fn run(ctx: &mut Ctx<'_>, args: &RunArgs) -> Result<Exit> {
    if args.no_judge {
        require_human(&ctx.ws, ctx.env, HumanAct::RunWithoutJudge)?;
    }
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let mut config = loaded.config.clone();
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
    let max = (max != 0).then_some(max);
    let budget = super::budget::from_flags(&config.r#loop, &args.budget);
    let spec = RunSpec::goal(&config, max, budget, args.no_judge);
    let bounds = tether_runtime::bounds::for_new_run(&ctx.ws, &loaded);
    let shown = Shown {
        label: LABEL,
        max,
        banner: ("goal run", banner(&config.plan.to_string_lossy(), max)),
        events: args.events,
    };
    let place = Place {
        worktree: args.place.worktree,
        commit: args.place.commit,
    };
    // `--parallel` (even 1: one goal at a time, each in its own worktree, in `after:` order) or
    // `[run] parallel` above 1 makes it a run of many goals.
    let parallel = args.parallel.unwrap_or(config.run.parallel);
    if args.parallel.is_some() || parallel > 1 {
        // Before anyone is asked to approve contracts: the goals need a repository to branch.
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(tether_runtime::fleet::ready(&ctx.ws, &config))?;
        let banner = shown.banner;
        let launch = foreground::launch(ctx, (config, bounds), (spec, place), Vec::new(), banner);
        super::plan::ensure_approved(ctx, args.approve)?;
        if args.workers && !tether_runtime::store::is_team(&ctx.ws, ctx.env)? {
            return Err(Failure::usage(anyhow!(
                "--workers offers the goals in a team store, where workers find them: set \
                 TETHER_STORE_URL (or [store] url) to the team's PostgreSQL database"
            )));
        }
        let remote = args.workers.then(|| args.remote.clone());
        return super::fleet::run(ctx, launch, parallel, remote);
    }
    let fg = foreground::prepare(ctx, (config, bounds), spec, place, shown)?;
    // Configuration problems first, so nobody is asked to approve contracts for a run that
    // cannot start.
    super::plan::ensure_approved(ctx, args.approve)?;
    foreground::drive(ctx, fg, report)
}

/// Names the progress line of a goal run.
pub const LABEL: &str = "run";

/// What the line announcing a new goal run says after its id.
pub(super) fn banner(plan: &str, max: Option<u32>) -> String {
    let budget = max.map_or_else(
        || "no limit".to_owned(),
        |m| format!("up to {m} iterations"),
    );
    format!("{plan} · {budget}")
}

/// The closing line of a run and its exit code.
pub fn report(ws: &Workspace, run: &RunId, end: &End, began: Instant) -> (String, Exit) {
    match end {
        End::Goal(end) => goal_report(run, end, began),
        End::Ralph(end) => super::ralph::ralph_report(ws, run, end),
    }
}

/// The closing line of a goal run and its exit code.
fn goal_report(run: &RunId, end: &GoalEnd, began: Instant) -> (String, Exit) {
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
        GoalEnd::Blocked { rule, reason } => (
            format!("run {run} blocked ({rule}): {reason}; {resume}"),
            Exit::Paused,
        ),
        GoalEnd::Stopped(how) => stopped::report(run, how, stopped::GOAL),
    }
}
