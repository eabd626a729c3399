//! `tether store push`: copies this workspace's history into the team store (see
//! `tether_runtime::push`) and says what it did.

use anyhow::{Result, anyhow};

use super::Ctx;
use crate::cli::{StoreCommand, StorePushArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether store …`.
pub fn run(ctx: &mut Ctx<'_>, command: &StoreCommand) -> Result<Exit> {
    match command {
        StoreCommand::Push(args) => push(ctx, args),
    }
}

fn push(ctx: &mut Ctx<'_>, args: &StorePushArgs) -> Result<Exit> {
    let url = match &args.store {
        Some(url) => url.clone(),
        None => tether_config::load_store(ctx.ws.root(), ctx.env)
            .map_err(Failure::usage)?
            .url
            .ok_or_else(|| {
                Failure::usage(anyhow!(
                    "no team store to push to: pass --store postgres://… or set \
                     TETHER_STORE_URL (or [store] url in tether.toml)"
                ))
            })?,
    };
    let config = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env).ok();
    let config = config.as_ref().map(|loaded| &loaded.config);
    let pushed = tether_runtime::push::push(&ctx.ws, config, &url)?;
    if args.json {
        super::json(ctx.out, &pushed)?;
    } else {
        writeln!(
            ctx.out,
            "pushed to {}: {} runs copied, {} extended, {} already there; {} events, {} \
             questions of no run, {} contract approvals",
            tether_store_pg::redacted(&url),
            pushed.runs_copied,
            pushed.runs_extended,
            pushed.runs_already_there,
            pushed.events,
            pushed.questions,
            pushed.approvals
        )?;
        for run in &pushed.runs_diverged {
            writeln!(
                ctx.out,
                "left alone: run {run} — its team copy has events this workspace does not"
            )?;
        }
    }
    Ok(Exit::Done)
}
