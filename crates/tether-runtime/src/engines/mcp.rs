//! `tether mcp`'s server composed: the store, the configuration (tether.toml as loaded, or a
//! run's as the process driving it holds it), the run questions are filed under, plan mode's
//! tools, and where `complete_goal` runs verify. Nothing is opened or built before a tool needs
//! it, so a client gets its `initialize` answered within milliseconds.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use tether_config::{Config, Env, Workspace};
use tether_core::planning::{Baseline, PlanRef, PlanTarget, plan_tools};
use tether_mcp::{ExtraTools, Options, Sandboxes, TetherMcp, VerifySandbox};
use tether_store::RunId;

use crate::Host;
use crate::compose::sandbox::RunSandbox;
use crate::error::{Error, Result};

/// What a `tether mcp` serves.
pub struct Setup<'a> {
    /// The workspace.
    pub ws: &'a Workspace,
    /// Where the store's URL override comes from.
    pub env: &'a dyn Env,
    /// The store of the run that handed the session over (its configuration's, whatever
    /// tether.toml says now); `None`: the one tether.toml names.
    pub store: Option<tether_config::StoreConfig>,
    /// The configuration, or why it cannot be loaded (the tools that need it say so).
    pub config: Result<Config, String>,
    /// The run questions and sign-offs are filed under, or why the id given is not one.
    pub run: Result<Option<RunId>, String>,
    /// Plan mode's drafting session (`--drafting <dir>`): its plan tools are served too.
    pub drafting: Option<&'a Path>,
    /// How often a waiting `ask_human` reports progress.
    pub progress_every: Duration,
    /// How long the end of the session waits for the notice sinks.
    pub notice_grace: Duration,
    /// The sandbox of the run that handed the session over (its agent's own `tether mcp`).
    pub run_sandbox: Option<RunSandbox>,
}

/// The server `setup` describes; what `complete_goal` runs for the agent runs in the run's
/// sandbox when the session was handed over, else in one of the server's own built by `host`
/// at the first call.
pub fn server(setup: Setup<'_>, host: &Host) -> Result<TetherMcp> {
    let extra = match setup.drafting {
        Some(dir) => drafting_tools(setup.ws, setup.config.as_ref().ok(), dir)?,
        None => ExtraTools::default(),
    };
    let verify_sandbox = verify_sandbox(&setup, host);
    Ok(TetherMcp::new(Options {
        workspace: setup.ws.clone(),
        store: match &setup.store {
            Some(store) => crate::compose::store::connector_of(setup.ws, store)?,
            None => crate::compose::store::connector(setup.ws, setup.env)?,
        },
        config: setup.config,
        run: setup.run,
        progress_every: setup.progress_every,
        extra,
        notice_grace: setup.notice_grace,
        verify_sandbox,
    }))
}

/// Where `complete_goal` runs verify: handed over from a run (the agent's own `tether mcp`),
/// in that run's sandbox; otherwise in one of this server's own, built at the first call.
fn verify_sandbox(setup: &Setup<'_>, host: &Host) -> VerifySandbox {
    let sandboxes = |run: &RunSandbox| Sandboxes {
        shell: run.shell.clone(),
        network: run.shell_network.clone(),
    };
    if let Some(run) = &setup.run_sandbox {
        return VerifySandbox::fixed(sandboxes(run));
    }
    let (ws, config, host) = (setup.ws.clone(), setup.config.clone(), host.clone());
    let built = OnceLock::new();
    VerifySandbox::new(move || {
        built
            .get_or_init(|| {
                let config = config.as_ref().map_err(Clone::clone)?;
                crate::compose::sandbox::for_run(
                    config,
                    &ws,
                    &crate::compose::sandbox::Made::default(),
                    &host,
                )
                .map(|run| sandboxes(&run))
                .map_err(|e| {
                    format!(
                        "the sandbox for verify cannot be set up: {}",
                        crate::error::chain(&e)
                    )
                })
            })
            .clone()
    })
}

/// Plan mode's `write_plan` and `edit_plan` over the drafting session in `dir`.
fn drafting_tools(ws: &Workspace, config: Option<&Config>, dir: &Path) -> Result<ExtraTools> {
    let config = config.ok_or(Error::DraftingNeedsConfig)?;
    let baseline = Baseline::load(dir).map_err(|cause| Error::Drafting {
        dir: dir.display().to_string(),
        cause,
    })?;
    let target = PlanTarget {
        plan: PlanRef::new(ws, config),
        baseline,
    };
    Ok(ExtraTools(plan_tools(target)))
}
