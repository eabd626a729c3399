//! `tether mcp`: the MCP server on stdin and stdout, for any MCP client.
//!
//! Nothing but protocol goes to stdout; logs go to stderr. The store is opened only when a
//! question needs it, and the runtime is a single thread, so a client gets its `initialize`
//! answered within milliseconds.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use tether_config::Config;
use tether_core::planning::{Baseline, PlanRef, PlanTarget, plan_tools};
use tether_mcp::{ExtraTools, Options, Sandboxes, TetherMcp, VerifySandbox};
use tether_store::RunId;

use super::Ctx;
use crate::cli::McpArgs;
use crate::exit::Exit;

use tether_runtime::bridge::RUN_ENV;

/// `tether mcp`.
pub fn run(ctx: &mut Ctx<'_>, args: &McpArgs) -> Result<Exit> {
    let server = server(ctx, args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
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
    let extra = match &args.drafting {
        Some(dir) => drafting_tools(ctx, config.as_ref().ok(), dir)?,
        None => ExtraTools::default(),
    };
    let verify_sandbox = verify_sandbox(ctx, &config);
    Ok(TetherMcp::new(Options {
        workspace: ctx.ws.clone(),
        store: tether_runtime::store::connector(&ctx.ws, ctx.env)?,
        config,
        run,
        progress_every: Duration::from_millis(args.progress_ms.max(1)),
        extra,
        notice_grace: super::notice_grace(ctx.env),
        verify_sandbox,
    }))
}

/// Where `complete_goal` runs verify: handed over from a run (the agent's own `tether mcp`),
/// in that run's sandbox; otherwise in one of this server's own, built at the first call.
fn verify_sandbox(ctx: &Ctx<'_>, config: &Result<Config, String>) -> VerifySandbox {
    let sandboxes = |run: &tether_runtime::sandbox::RunSandbox| Sandboxes {
        shell: run.shell.clone(),
        network: run.shell_network.clone(),
    };
    if let Some(run) = &ctx.run_sandbox {
        return VerifySandbox::fixed(sandboxes(run));
    }
    let (ws, config) = (ctx.ws.clone(), config.clone());
    let built = std::sync::OnceLock::new();
    VerifySandbox::new(move || {
        built
            .get_or_init(|| {
                let config = config.as_ref().map_err(Clone::clone)?;
                tether_runtime::sandbox::for_run(config, &ws, &crate::bridged::host())
                    .map(|run| sandboxes(&run))
                    .map_err(|e| format!("the sandbox for verify cannot be set up: {e:#}"))
            })
            .clone()
    })
}

fn drafting_tools(ctx: &Ctx<'_>, config: Option<&Config>, dir: &Path) -> Result<ExtraTools> {
    let config = config.ok_or_else(|| anyhow!("plan mode needs a tether.toml that loads"))?;
    let baseline = Baseline::load(dir)
        .with_context(|| format!("reading the drafting session in {}", dir.display()))?;
    let target = PlanTarget {
        plan: PlanRef::new(&ctx.ws, config),
        baseline,
    };
    Ok(ExtraTools(plan_tools(target)))
}

/// The run named by `--run` or `TETHER_RUN_ID` (if any), or why the id is not one.
fn run_of(ctx: &Ctx<'_>, args: &McpArgs) -> Result<Option<RunId>, String> {
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
