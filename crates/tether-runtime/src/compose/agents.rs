//! Which agent does the work: tether's own, a command, an ACP agent, or one of the agent CLIs
//! registered in [`tether_agent::cli::AGENT_CLIS`] — found by its `[executor] kind`, so no kind
//! is ever taken for another: one without a descriptor is refused.

use tether_agent::cli::{AGENT_CLIS, Agent, Gate};
use tether_config::{Config, ExecutorKind, Workspace};

use crate::error::{Error, Result};

/// Who the configured executor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    /// tether's own agent on `[model]`.
    Builtin,
    /// Any program, per turn.
    Command,
    /// Any agent speaking the Agent Client Protocol.
    Acp,
    /// A registered agent CLI.
    Cli(Agent),
}

/// Who `kind` names; refused for a kind that names no registered agent CLI.
pub fn of_kind(kind: ExecutorKind) -> Result<Worker> {
    Ok(match kind {
        ExecutorKind::Builtin => Worker::Builtin,
        ExecutorKind::Command => Worker::Command,
        ExecutorKind::Acp => Worker::Acp,
        // An agent CLI, found by its spelling in the registry.
        ExecutorKind::Cli(kind) => {
            Worker::Cli(tether_agent::cli::find(kind).ok_or(Error::NotAnAgentCli(kind))?)
        }
    })
}

/// The agent CLI `kind` names, if it names one.
pub fn agent_of(kind: ExecutorKind) -> Option<Agent> {
    match of_kind(kind) {
        Ok(Worker::Cli(agent)) => Some(agent),
        _ => None,
    }
}

/// Whose sandbox and key the configured agent gets: its own; for an ACP adapter of an agent
/// CLI (`codex-acp`, named after it) that CLI's (its install tree, its configuration
/// directory, its key); any other ACP agent a command's, with the network open.
pub fn sandboxed_as(config: &Config) -> Result<Worker> {
    let worker = of_kind(config.executor.kind)?;
    if worker != Worker::Acp {
        return Ok(worker);
    }
    let program = config.executor.program.as_deref().unwrap_or_default();
    let name = program.rsplit('/').next().unwrap_or(program);
    Ok(AGENT_CLIS
        .iter()
        .find(|cli| cli.acp_adapter.is_some_and(|marker| name.contains(marker)))
        .map_or(Worker::Acp, |cli| Worker::Cli(cli)))
}

/// What keeps `[human] ask_before` from holding for `agent` as `config` runs it in `ws`: all of
/// its commands when tether does not gate them, else what of its own configuration lets a
/// command run without asking (each said with its file and key).
pub fn ungated(config: &Config, ws: &Workspace, agent: Agent) -> Vec<String> {
    let title = agent.title;
    match agent.gate {
        Gate::Ungated { allows } => vec![format!(
            "[human] ask_before is not enforced for {title}: tether does not gate its commands, \
             so {title} runs, without asking, {allows}"
        )],
        Gate::Acp { loosened } => {
            let person = crate::compose::sandbox::config_dir(config, agent);
            loosened(ws.root(), &person)
                .into_iter()
                .map(|why| format!("[human] ask_before may not hold for {title}: {why}"))
                .collect()
        }
        Gate::Hook | Gate::Extension => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_executor_kind_is_tethers_own_or_a_registered_agent_cli() {
        for (spelling, kind) in crate::schema().executor_kinds() {
            match of_kind(kind) {
                Ok(Worker::Cli(agent)) => assert_eq!(agent.kind, spelling),
                Ok(_) => assert!(
                    ["builtin", "command", "acp"].contains(&spelling),
                    "{spelling}"
                ),
                Err(e) => panic!("[executor] kind = {spelling:?}: {e}"),
            }
        }
        for cli in AGENT_CLIS {
            assert!(
                crate::schema()
                    .executor_kinds()
                    .iter()
                    .any(|(s, _)| *s == cli.kind),
                "the agent CLI `{}` has no [executor] kind",
                cli.kind
            );
        }
    }

    #[test]
    fn an_acp_adapter_gets_the_sandbox_of_the_cli_it_adapts() {
        let mut config = Config::default();
        config.executor.kind = ExecutorKind::Acp;
        for (program, kind) in [
            ("/opt/bin/codex-acp", Some("codex")),
            ("claude-agent-acp", Some("claude")),
            ("gemini", None),
        ] {
            config.executor.program = Some(program.to_owned());
            let got = match sandboxed_as(&config).unwrap() {
                Worker::Cli(agent) => Some(agent.kind),
                _ => None,
            };
            assert_eq!(got, kind, "{program}");
        }
    }
}
