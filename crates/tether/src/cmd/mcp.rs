//! `tether mcp`: the MCP server (see `tether_runtime::mcp`) on stdin and stdout, for any MCP
//! client.
//!
//! Nothing but protocol goes to stdout; logs go to stderr. The store is opened only when a
//! question needs it, and the runtime is a single thread, so a client gets its `initialize`
//! answered within milliseconds.

use std::time::Duration;

use anyhow::Result;
use tether_mcp::TetherMcp;
use tether_runtime::mcp::Setup;
use tether_store::RunId;

use super::Ctx;
use crate::cli::McpArgs;
use crate::exit::Exit;

use tether_runtime::bridge::RUN_ENV;

/// `tether mcp`.
pub fn run(ctx: &mut Ctx<'_>, args: &McpArgs) -> Result<Exit> {
    let server = server(ctx, args)?;
    let runtime = super::current_thread()?;
    let served = runtime.block_on(tether_mcp::serve_stdio(server));
    runtime.shutdown_background();
    served?;
    Ok(Exit::Done)
}

/// The MCP server `args` ask for, in `ctx`'s workspace (on stdio, or for a sandboxed agent's
/// `tether mcp` on the bridge).
pub fn server(ctx: &Ctx<'_>, args: &McpArgs) -> Result<TetherMcp> {
    let run = run_of(ctx, args);
    if let Err(e) = &run {
        tracing::warn!("{e}");
    }
    // Handed over by a run's agent: the run's configuration (its sandbox, its judge).
    let config = match super::load_config(ctx) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                tracing::warn!("{w}");
            }
            Ok(loaded.config)
        }
        Err(e) => {
            tracing::warn!("{e}");
            Err(e.to_string())
        }
    };
    let setup = Setup {
        ws: &ctx.ws,
        env: ctx.env,
        store: ctx.run_config.as_ref().map(|c| c.store.clone()),
        config,
        run,
        drafting: args.drafting.as_deref(),
        progress_every: Duration::from_millis(args.progress_ms.max(1)),
        notice_grace: tether_runtime::process::notice_grace(ctx.env),
        run_sandbox: ctx.run_sandbox.clone(),
    };
    Ok(tether_runtime::mcp::server(setup, &crate::bridged::host())?)
}

/// The run named by `--run` or `TETHER_RUN_ID` (if any), or why the id is not one; for a session
/// a run's agent handed over through the bridge, that run, whatever it names.
fn run_of(ctx: &Ctx<'_>, args: &McpArgs) -> Result<Option<RunId>, String> {
    if let Some(run) = &ctx.run {
        return Ok(Some(run.clone()));
    }
    let (given, from) = match &args.run {
        Some(r) => (r.clone(), "--run"),
        None => match ctx.env.var(RUN_ENV).filter(|r| !r.trim().is_empty()) {
            Some(r) => (r, RUN_ENV),
            None => return Ok(None),
        },
    };
    given.trim().parse::<RunId>().map(Some).map_err(|_| {
        format!(
            "{from} is `{given}`, which is not a run id (like r-ab12cd); set it to a run id that \
             `tether status` shows in this workspace, or leave it out to file questions under no run"
        )
    })
}
