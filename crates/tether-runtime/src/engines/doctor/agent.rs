//! The executor check: the built-in agent has its `[model]`; a command's program is found; an
//! agent CLI runs and is new enough. The last works for every registered agent CLI through
//! [`Cli::check_version`] and its descriptor (its program, minimum version and install line).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_agent::ExecError;
use tether_agent::cli::{Agent, Cli, CliError, Gate};
use tether_config::{Config, Env, Workspace};
use tokio_util::sync::CancellationToken;

use super::Check;
use crate::Host;
use crate::compose::agents::Worker;
use crate::compose::sandbox::Made;

const NAME: &str = "executor";

/// Checks the executor `config` names.
pub async fn check(
    config: &Config,
    (ws, env): (&Workspace, &dyn Env),
    tether: &Path,
    host: &Host,
) -> Check {
    match crate::compose::agents::of_kind(config.executor.kind) {
        Ok(Worker::Builtin) => builtin(config),
        Ok(Worker::Command) => command(config, ws, env),
        Ok(Worker::Acp) => acp(config, ws, host).await,
        Ok(Worker::Cli(agent)) => agent_cli(agent, config, ws, (tether, host)).await,
        Err(e) => Check::fail(
            NAME,
            e.to_string(),
            "set [executor] kind to one tether runs",
        ),
    }
}

fn builtin(config: &Config) -> Check {
    match &config.model {
        Some(model) => Check::pass(
            NAME,
            format!(
                "the built-in agent on [model] ({} {})",
                model.api.as_str(),
                model.model
            ),
        ),
        None => {
            let others: Vec<&str> = crate::schema()
                .executor_kinds()
                .into_iter()
                .filter(|(_, kind)| *kind != tether_config::ExecutorKind::Builtin)
                .map(|(name, _)| name)
                .collect();
            Check::fail(
                NAME,
                "the built-in agent has no model: tether.toml has no [model]",
                format!(
                    "add a [model] table (api, base_url, model, api_key_env), or set [executor] \
                     kind to the agent you use ({})",
                    others.join(", ")
                ),
            )
        }
    }
}

fn command(config: &Config, ws: &Workspace, env: &dyn Env) -> Check {
    let Some(program) = config.executor.command.first() else {
        return Check::fail(
            NAME,
            "[executor] command is empty",
            "set [executor] command",
        );
    };
    match find_program(program, ws.root(), env) {
        Some(path) => Check::pass(NAME, format!("command `{program}` ({})", path.display())),
        None => Check::fail(
            NAME,
            format!("command `{program}` is not found or not executable"),
            "install it, or set [executor] command to its path",
        ),
    }
}

/// Where `program` would be run from: a path (relative to the workspace), or the first
/// executable file of that name on `PATH`.
fn find_program(program: &str, root: &Path, env: &dyn Env) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = root.join(program);
        return executable(&path).then_some(path);
    }
    let path = env.var("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// `<program> --version` through the executor's own [`Cli`]: missing, too old, or its version.
async fn agent_cli(
    agent: Agent,
    config: &Config,
    ws: &Workspace,
    (tether, host): (&Path, &Host),
) -> Check {
    let mut settings = match crate::compose::executor::cli_settings(
        (config, ws, &Made::default()),
        Some(agent),
        Vec::new(),
        host,
    ) {
        Ok(settings) => settings,
        Err(e) => return Check::fail(NAME, crate::error::chain(&e), "reinstall tether"),
    };
    // The version check names no MCP server; the one checked is the `mcp` check's.
    tether.clone_into(&mut settings.tether);
    // A CLI that makes its XDG directories when it starts (opencode, even for `--version`)
    // makes them in the run's copy of its configuration, as its runs do: the sandbox grants no
    // write to the home directory.
    if let Some(dir) = settings.config_dir.clone() {
        for kind in ["DATA", "CACHE", "STATE", "CONFIG"] {
            let path = dir.dir().join("xdg").join(kind.to_lowercase());
            settings
                .env
                .push((format!("XDG_{kind}_HOME"), path.display().to_string()));
        }
    }
    let program = settings.program.clone();
    let cli = Cli::new(agent, settings, Arc::new(|| None));
    match cli.check_version(&CancellationToken::new()).await {
        Ok(version) => {
            let found = format!("{} {version} ({program})", agent.title);
            let ungated = match config.human.ask_before.is_empty() {
                true => Vec::new(),
                false => crate::compose::agents::ungated(config, ws, agent),
            };
            match (ungated.is_empty(), agent.gate) {
                (true, _) => Check::pass(NAME, found),
                // Nothing can gate it: said, as the run says it.
                (false, Gate::Ungated { .. }) => {
                    Check::pass(NAME, format!("{found}\n{}", ungated.join("\n")))
                }
                (false, _) => Check::fail(
                    NAME,
                    format!("{found}\n{}", ungated.join("\n")),
                    "give every command [human] ask_before names to a person: take out what \
                     lets the agent run it without asking, or run an agent tether gates",
                ),
            }
        }
        Err(ExecError::Setup(e)) => match e.downcast_ref::<CliError>() {
            Some(CliError::NotRunnable {
                program, detail, ..
            }) => Check::fail(
                NAME,
                format!(
                    "{} does not run: `{program} --version` {detail}",
                    agent.title
                ),
                format!(
                    "install it with `{}`, or set [executor] program in tether.toml to its path",
                    agent.install
                ),
            ),
            Some(CliError::Unreadable { path, .. }) => Check::fail(
                NAME,
                format!(
                    "{} cannot read {} in the sandbox: it is installed outside the places the \
                     sandbox grants",
                    agent.title,
                    path.display()
                ),
                format!(
                    "add its directory ({}) to [sandbox] readable in tether.toml",
                    path.parent().unwrap_or(path).display()
                ),
            ),
            Some(CliError::TooOld { found, minimum, .. }) => Check::fail(
                NAME,
                format!(
                    "{} {found} ({program}) is too old: tether needs {minimum} or newer",
                    agent.title
                ),
                format!(
                    "update it with `{}`, or set [executor] program to a newer one",
                    agent.install
                ),
            ),
            _ => Check::fail(
                NAME,
                e.to_string(),
                "set [executor] program to a working CLI",
            ),
        },
        Err(e) => Check::fail(
            NAME,
            e.to_string(),
            "set [executor] program to a working CLI",
        ),
    }
}

/// An ACP agent: it starts and answers `initialize`.
async fn acp(config: &Config, ws: &Workspace, host: &Host) -> Check {
    let settings = match crate::compose::executor::cli_settings(
        (config, ws, &Made::default()),
        None,
        Vec::new(),
        host,
    ) {
        Ok(settings) => settings,
        Err(e) => {
            return Check::fail(
                NAME,
                crate::error::chain(&e),
                "set [executor] program to the ACP agent",
            );
        }
    };
    let executor = tether_agent::AcpExecutor::new(
        settings,
        Arc::new(|| None),
        Arc::new(tether_agent::acp::RefuseAll),
    );
    match executor.check().await {
        Ok(agent) => Check::pass(
            NAME,
            format!(
                "ACP agent {agent} ({})",
                config.executor.program.as_deref().unwrap_or("")
            ),
        ),
        Err(e) => Check::fail(
            NAME,
            format!("{e:#}"),
            "set [executor] program (and args, such as --acp) to an agent that speaks ACP on stdio",
        ),
    }
}
