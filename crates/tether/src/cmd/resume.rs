//! `tether resume`: a stopped run of either loop taken up again in the foreground, from where
//! the store says it stands.

use anyhow::{Result, anyhow};
use tether_core::control;
use tether_core::human_act::HumanAct;
use tether_store::{Run, RunCell, RunKind};

use super::Ctx;
use super::foreground::{self, Parts, Start};
use super::ralph::RalphLoop;
use super::run::GoalLoop;
use crate::cli::ResumeArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether resume`.
pub fn run(ctx: &mut Ctx<'_>, args: &ResumeArgs) -> Result<Exit> {
    if super::budget::any_raise(&args.raise) {
        super::require_human(ctx, HumanAct::RaiseBudget)?;
    }
    if args.accept_config {
        super::require_human(ctx, HumanAct::AcceptConfig)?;
    }
    super::require_human(ctx, HumanAct::ResumeRun)?;
    let (run, store) = {
        let store = crate::store::open(&ctx.ws, ctx.env)?;
        let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
        (run, store)
    };
    if crate::store::is_team(&ctx.ws, ctx.env)? {
        refuse_elsewhere(ctx, &run)?;
    }
    super::budget::raise(ctx, &store, &run, &args.raise, &super::who(ctx))?;
    drop(store);
    let mut loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    // The settings that bound the agent are the run's, unless a person accepts tether.toml's.
    let bounds =
        super::settings::for_resumed_run(ctx, &run, &mut loaded.config, args.accept_config)?;
    let config = &loaded.config;
    let cell = RunCell::default();
    if run.kind == RunKind::Goal {
        // Sign-off by verify alone is the run's choice, kept in its spec.
        let no_judge = run
            .spec
            .get("no_judge")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let start = Start::Resume(run.id);
        let parts = Parts::new::<GoalLoop>(
            &ctx.ws,
            ctx.env,
            (config, bounds),
            &start,
            (args.events, RESUMED),
            |ws, journal, human| {
                crate::executor::for_goal_loop(config, ws, ctx.env, journal, human, &cell, no_judge)
            },
        )?;
        return foreground::drive::<GoalLoop>(ctx, parts, &cell, start, args.events);
    }
    // Any other kind is refused by the Ralph loop with a message naming the run's kind.
    let start = Start::Resume(run.id);
    let parts = Parts::new::<RalphLoop>(
        &ctx.ws,
        ctx.env,
        (config, bounds),
        &start,
        (args.events, RESUMED),
        |ws, _, human| crate::executor::from_config(config, ws, ctx.env, human, &cell),
    )?;
    foreground::drive::<RalphLoop>(ctx, parts, &cell, start, args.events)
}

/// A resumed run works where it did (its worktree, found again, or the checkout) and commits
/// its sign-offs when it has a worktree.
const RESUMED: crate::cli::PlaceArgs = crate::cli::PlaceArgs {
    worktree: false,
    commit: true,
};

/// Only the machine and workspace a run works in can drive it (a team store shows runs of every
/// machine and workspace): anywhere else, says where to resume it. (A workspace's own store
/// holds only its runs, even after the directory moved.)
fn refuse_elsewhere(ctx: &Ctx<'_>, run: &Run) -> Result<()> {
    if tether_store::control::is_elsewhere(run) {
        return Err(Failure::usage(anyhow!(
            "run {} belongs to machine {} ({}); resume it there: its workspace, transcripts and \
             agent are on that machine",
            run.id,
            run.machine.as_deref().unwrap_or("unknown"),
            run.workspace.display()
        )));
    }
    let here = std::fs::canonicalize(ctx.ws.root()).unwrap_or_else(|_| ctx.ws.root().into());
    let there = std::fs::canonicalize(&run.workspace).unwrap_or_else(|_| run.workspace.clone());
    if !run.workspace.as_os_str().is_empty() && here != there {
        return Err(Failure::usage(anyhow!(
            "run {} works in {}; resume it from there (tether -C {} resume {})",
            run.id,
            run.workspace.display(),
            run.workspace.display(),
            run.id
        )));
    }
    Ok(())
}
