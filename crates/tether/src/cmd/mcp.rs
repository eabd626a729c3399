//! `tether mcp`: the MCP server on stdin and stdout, for any MCP client.
//!
//! Nothing but protocol goes to stdout; logs go to stderr. The store is opened only when a
//! question needs it, and the runtime is a single thread, so a client gets its `initialize`
//! answered within milliseconds.

use std::time::Duration;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context as _, Result, anyhow};
use tether_config::{Config, Workspace};
use tether_core::bounds::Bounds;
use tether_core::planning::{Baseline, PlanRef, PlanTarget, plan_tools};
use tether_mcp::{ConfineVerify, ExtraTools, Options, TetherMcp};
use tether_signoff::Signoff;
use tether_store::RunId;

use super::Ctx;
use crate::cli::McpArgs;
use crate::exit::Exit;
use crate::sandbox::RunSandbox;

/// The variable that files the questions under a run (set by a `tether run` that launches
/// `tether mcp` for an external agent).
pub const RUN_ENV: &str = "TETHER_RUN_ID";

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
    let confine_verify = config.as_ref().ok().map(|c| confine_verify(ctx, c));
    Ok(TetherMcp::new(Options {
        workspace: ctx.ws.clone(),
        store: crate::store::connector(&ctx.ws, ctx.env)?,
        config,
        run,
        progress_every: Duration::from_millis(args.progress_ms.max(1)),
        extra,
        notice_grace: super::notice_grace(ctx.env),
        confine_verify,
    }))
}

/// `complete_goal`'s verify commands run in the sandbox `config` describes (for a run's agent,
/// the run's: see `load_config`), as `tether goal complete`'s do.
fn confine_verify(ctx: &Ctx<'_>, config: &Config) -> ConfineVerify {
    let (ws, config) = (ctx.ws.clone(), config.clone());
    ConfineVerify(Arc::new(move |signoff: Signoff| {
        let sandbox = verify_sandbox(&ws, &config)?;
        Ok(signoff
            .sandboxed(sandbox.shell)
            .with_network_sandbox(sandbox.shell_network))
    }))
}

/// The sandbox verify runs in for `config` in `ws`, built once per process and settings: the
/// driving process serves its agent's MCP sessions one after another, and each sandbox keeps
/// a bridge and a directory for the process's life.
fn verify_sandbox(ws: &Workspace, config: &Config) -> Result<RunSandbox, String> {
    type Built = Option<((PathBuf, Bounds), RunSandbox)>;
    static BUILT: Mutex<Built> = Mutex::new(None);
    let key = (ws.root().to_owned(), Bounds::of(config));
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((k, sandbox)) = built.as_ref()
        && *k == key
    {
        return Ok(sandbox.clone());
    }
    let sandbox = crate::sandbox::for_run(config, ws).map_err(|e| format!("{e:#}"))?;
    *built = Some((key, sandbox.clone()));
    Ok(sandbox)
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
