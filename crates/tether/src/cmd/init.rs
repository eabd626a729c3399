//! `tether init`.

use anyhow::Result;
use tether_core::init::{self, InitAction, InitError, InitOptions};

use super::Ctx;
use crate::cli::InitArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// Sets the workspace up and says what was done.
pub fn run(ctx: &mut Ctx<'_>, args: &InitArgs) -> Result<Exit> {
    let actions = match init::init(
        &ctx.ws,
        tether_runtime::schema(),
        InitOptions { force: args.force },
    ) {
        Err(e @ InitError::Exists { .. }) => return Err(Failure::usage(e)),
        other => other?,
    };
    let ws = &ctx.ws;
    for action in &actions {
        let line = match action {
            InitAction::Created(p) => format!("created   {}", ws.display(p)),
            InitAction::Overwrote(p) => format!("replaced  {}", ws.display(p)),
            InitAction::CreatedStore(p) => format!("created   {} (the store)", ws.display(p)),
            InitAction::KeptStore(p) => format!("kept      {} (the store)", ws.display(p)),
            InitAction::IgnoredState(p) => format!("ignored   .tether/ in {}", ws.display(p)),
            InitAction::AlreadyIgnored(p) => {
                format!("kept      {} (already ignores .tether/)", ws.display(p))
            }
        };
        writeln!(ctx.out, "{line}")?;
    }
    writeln!(
        ctx.out,
        "\nNext: describe your goals in plan.md, then `tether validate` and `tether plan`."
    )?;
    Ok(Exit::Done)
}
