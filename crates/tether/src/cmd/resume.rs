//! `tether resume`: a stopped run of either loop taken up again in the foreground, from where
//! the store says it stands.

use std::io::{IsTerminal as _, Write as _};

use anyhow::Result;
use tether_config::Loaded;
use tether_core::control;
use tether_human::visible::visible;
use tether_runtime::bounds::{Resumed, Settled};
use tether_runtime::human_act::{HumanAct, require_human};
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
        require_human(&ctx.ws, ctx.env, HumanAct::RaiseBudget)?;
    }
    if args.accept_config {
        require_human(&ctx.ws, ctx.env, HumanAct::AcceptConfig)?;
    }
    require_human(&ctx.ws, ctx.env, HumanAct::ResumeRun)?;
    if let Some(before) = fleet_named(ctx, args)? {
        return again(ctx, before);
    }
    let (run, store) = {
        let store = crate::cmd::store(ctx)?;
        let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
        (run, store)
    };
    tether_runtime::launch::resumable_here(&ctx.ws, ctx.env, &store, &run)?;
    super::budget::raise(ctx, &store, &run, &args.raise, &super::who(ctx))?;
    // The run's iteration budget now, with what people added (0: unlimited).
    let max = store
        .run(&run.id)
        .ok()
        .and_then(|r| r.limits().iterations)
        .filter(|m| *m > 0);
    drop(store);
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    // The run's configuration is its record's, unless a person accepts tether.toml's.
    let settled = configuration(ctx, &run, &loaded, args.accept_config)?;
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
    let (config, bounds) = (settled.config, settled.pinned);
    let fg = foreground::prepare(ctx, (config, bounds), spec, Place::RESUMED, shown)?;
    foreground::drive(ctx, fg, super::run::report)
}

/// The run of many goals `args` names, when it names one.
fn fleet_named(ctx: &Ctx<'_>, args: &ResumeArgs) -> Result<Option<tether_store::Fleet>> {
    let Some(id) = args.run.as_deref().and_then(|id| id.parse().ok()) else {
        return Ok(None);
    };
    let store = crate::cmd::store(ctx)?;
    match store.fleet(&id) {
        Ok(fleet) => Ok(Some(fleet)),
        Err(tether_store::StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Takes the run of many goals `before` up again with tether.toml's settings as they are (a run
/// of many goals records none of its own; each goal's run resumed keeps its own record's), its
/// contracts approved as for a new one.
fn again(ctx: &mut Ctx<'_>, before: tether_store::Fleet) -> Result<Exit> {
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let config = loaded.config.clone();
    let max = Some(config.r#loop.max_iterations).filter(|m| *m > 0);
    let budget = super::budget::from_flags(&config.r#loop, &Default::default());
    let spec = RunSpec::goal(&config, max, budget, false);
    let bounds = tether_runtime::bounds::for_new_run(&ctx.ws, &loaded);
    let banner = (
        "goal run",
        super::run::banner(&config.plan.to_string_lossy(), max),
    );
    let place = Place {
        worktree: false,
        commit: true,
    };
    let launch = foreground::launch(ctx, (config, bounds), (spec, place), Vec::new(), banner);
    super::plan::ensure_approved(ctx, false)?;
    super::fleet::again(ctx, launch, before)
}

/// The configuration of the resumed `run`: the one it recorded, when tether.toml (`loaded`)
/// says the same; else, after the difference is shown on stderr, tether.toml's when a person
/// accepts it (`accept`, or yes to the question on a terminal), and otherwise a refusal (exit
/// 2) naming the differences.
fn configuration(ctx: &Ctx<'_>, run: &Run, loaded: &Loaded, accept: bool) -> Result<Settled> {
    let changed = match tether_runtime::bounds::for_resumed_run(&ctx.ws, run, loaded, ctx.env) {
        Resumed::Settled(settled) => return Ok(*settled),
        Resumed::Changed(changed) => changed,
    };
    let mut err = std::io::stderr();
    writeln!(
        err,
        "tether.toml differs from the configuration run {} recorded:",
        run.id
    )?;
    for change in &changed.changes {
        writeln!(err, "  {}", visible(&change.to_string()))?;
    }
    if accept || asked(ctx)? {
        require_human(&ctx.ws, ctx.env, HumanAct::AcceptConfig)?;
        writeln!(
            err,
            "applied: the run keeps to tether.toml's configuration from now on"
        )?;
        return Ok(changed.accept());
    }
    Err(Failure::usage(changed.refuse()))
}

/// Whether the person at the terminal wants the change applied (never without a terminal).
fn asked(ctx: &Ctx<'_>) -> Result<bool> {
    if ctx.bridged || !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(false);
    }
    Ok(super::plan::review::confirm(
        &mut tether_human::Keyboard::get().reader(),
        &mut std::io::stderr(),
        "Apply tether.toml's configuration to the run?",
    )?)
}
