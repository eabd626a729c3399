//! `tether resume`: a stopped run of either loop taken up again in the foreground, from where
//! the store says it stands.

use anyhow::{Result, anyhow};
use tether_core::control;
use tether_core::human_act::HumanAct;
use tether_runtime::launch::{Place, RunSpec};
use tether_store::{Run, RunKind};

use super::Ctx;
use super::foreground::{self, Shown};
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
        let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
        let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
        (run, store)
    };
    if tether_runtime::store::is_team(&ctx.ws, ctx.env)? {
        refuse_elsewhere(ctx, &run)?;
    }
    super::budget::raise(ctx, &store, &run, &args.raise, &super::who(ctx))?;
    // The run's iteration budget now, with what people added (0: unlimited).
    let max = store
        .run(&run.id)
        .ok()
        .and_then(|r| r.limits().iterations)
        .filter(|m| *m > 0);
    drop(store);
    let mut loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    // The settings that bound the agent are the run's, unless a person accepts tether.toml's.
    let bounds =
        super::settings::for_resumed_run(ctx, &run, &mut loaded.config, args.accept_config)?;
    let shown = Shown {
        // Any other kind is refused by the Ralph loop with a message naming the run's kind.
        label: if run.kind == RunKind::Goal {
            super::run::LABEL
        } else {
            super::ralph::LABEL
        },
        max,
        banner: ("", String::new()),
        events: args.events,
    };
    let spec = RunSpec::Resume(run.id);
    let fg = foreground::prepare(ctx, (loaded.config, bounds), spec, Place::RESUMED, shown)?;
    foreground::drive(ctx, fg, super::run::report)
}

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
