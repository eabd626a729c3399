//! `tether resume`: a stopped run of either loop taken up again in the foreground, from where
//! the store says it stands.

use std::io::{IsTerminal as _, Write as _};

use anyhow::Result;
use tether_config::Config;
use tether_core::bounds::Pinned;
use tether_core::control;
use tether_core::human_act::HumanAct;
use tether_human::visible::visible;
use tether_runtime::bounds::Resumed;
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
    tether_runtime::launch::resumable_here(&ctx.ws, ctx.env, &run)?;
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
    let bounds = bounds(ctx, &run, &mut loaded.config, args.accept_config)?;
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

/// The settings that bound the agent in the resumed `run`: those it recorded, unless
/// tether.toml's (`config`, as loaded) differ and a person accepts them (`accept`, or yes to
/// the question on a terminal). The change is shown on stderr either way; `config` is left
/// holding the settings the run keeps to.
fn bounds(ctx: &Ctx<'_>, run: &Run, config: &mut Config, accept: bool) -> Result<Pinned> {
    let changed = match tether_runtime::bounds::for_resumed_run(&ctx.ws, run, config) {
        Resumed::Settled(pinned) => return Ok(pinned),
        Resumed::Changed(changed) => changed,
    };
    let mut err = std::io::stderr();
    writeln!(
        err,
        "tether.toml's settings that bound the agent differ from those run {} keeps to:",
        run.id
    )?;
    for change in &changed.changes {
        writeln!(err, "  {}", visible(&change.to_string()))?;
    }
    if accept || asked(ctx)? {
        super::require_human(ctx, HumanAct::AcceptConfig)?;
        writeln!(
            err,
            "applied: the run keeps to tether.toml's settings from now on"
        )?;
        return Ok(changed.accept());
    }
    let pinned = changed.keep(config)?;
    writeln!(
        err,
        "kept the run's settings; to apply tether.toml's, resume with `tether resume {} \
         --accept-config`",
        run.id
    )?;
    Ok(pinned)
}

/// Whether the person at the terminal wants the change applied (never without a terminal).
fn asked(ctx: &Ctx<'_>) -> Result<bool> {
    if ctx.bridged || !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(false);
    }
    Ok(super::plan::review::confirm(
        &mut tether_human::Keyboard::get().reader(),
        &mut std::io::stderr(),
        "Apply tether.toml's settings to the run?",
    )?)
}
