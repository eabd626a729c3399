//! The settings that bound the agent in a foreground run (see `tether_core::bounds`): a new
//! run records tether.toml's; a resumed run keeps its record, shows how tether.toml differs
//! from it, and takes tether.toml's only as a person's act (`--accept-config`, or yes on a
//! terminal).

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use tether_config::Config;
use tether_core::bounds::{Bounds, Pinned};
use tether_core::human_act::HumanAct;
use tether_store::Run;

use super::Ctx;
use crate::failure::Failure;

/// A new run's: tether.toml's as loaded (`config`), recorded with the run.
pub fn for_new_run(ctx: &Ctx<'_>, config: &Config) -> Pinned {
    let bounds = Bounds::of(config);
    Pinned {
        seen: bounds.clone(),
        bounds,
        accepted: false,
        read: reader(ctx),
    }
}

/// A resumed run's: those it recorded, unless tether.toml's (`config`, as loaded) differ and a
/// person accepts them (`accept`, or yes to the question on a terminal). The change is shown
/// on stderr either way; `config` is left holding the settings the run keeps to.
pub fn for_resumed_run(
    ctx: &Ctx<'_>,
    run: &Run,
    config: &mut Config,
    accept: bool,
) -> Result<Pinned> {
    let now = Bounds::of(config);
    let read = reader(ctx);
    // A run recorded before tether kept them has nothing to keep to but the file: the person
    // resuming it records the file's, as starting a run does.
    let Some(recorded) = Bounds::recorded(run) else {
        return Ok(Pinned {
            seen: now.clone(),
            bounds: now,
            accepted: true,
            read,
        });
    };
    let changes = recorded.changes(&now);
    if changes.is_empty() {
        return Ok(Pinned {
            seen: now,
            bounds: recorded,
            accepted: false,
            read,
        });
    }
    let mut err = std::io::stderr();
    writeln!(
        err,
        "tether.toml's settings that bound the agent differ from those run {} keeps to:",
        run.id
    )?;
    for change in &changes {
        writeln!(
            err,
            "  {}",
            tether_human::visible::visible(&change.to_string())
        )?;
    }
    let accepted = accept || asked(ctx)?;
    if accepted {
        super::require_human(ctx, HumanAct::AcceptConfig)?;
        writeln!(
            err,
            "applied: the run keeps to tether.toml's settings from now on"
        )?;
    } else {
        let unpinned = recorded.destination_changes(&now);
        if !unpinned.is_empty() {
            let names: Vec<&str> = unpinned.iter().map(|c| c.setting).collect();
            return Err(Failure::usage(anyhow!(
                "tether.toml changed where tether sends keys or what it starts as the agent ({}) \
                 since run {} started, and that cannot be kept from the record: look at the \
                 change (`git diff tether.toml`), then resume with `tether resume {} \
                 --accept-config` if a person made it",
                names.join(", "),
                run.id,
                run.id
            )));
        }
        recorded.pin(config);
        writeln!(
            err,
            "kept the run's settings; to apply tether.toml's, resume with `tether resume {} \
             --accept-config`",
            run.id
        )?;
    }
    Ok(Pinned {
        bounds: if accepted { now.clone() } else { recorded },
        seen: now,
        accepted,
        read,
    })
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

/// What tether.toml says of the settings now (read as this process read it at its start, in
/// its own environment), read again at each iteration boundary.
fn reader(ctx: &Ctx<'_>) -> Arc<dyn Fn() -> Option<Bounds> + Send + Sync> {
    let root: PathBuf = ctx.ws.root().to_owned();
    Arc::new(move || {
        tether_config::load(&root, &tether_config::ProcessEnv)
            .ok()
            .map(|loaded| Bounds::of(&loaded.config))
    })
}
