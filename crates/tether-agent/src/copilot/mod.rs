//! The `copilot` executor: GitHub Copilot CLI (`copilot --acp`) as the agent, driven over the
//! Agent Client Protocol by tether's [`AcpExecutor`], with tether's tools over MCP.
//!
//! Copilot CLI is started once per run with `--acp --no-auto-update`. It takes no stdio MCP
//! server in `session/new` (only HTTP and SSE ones), so tether's server comes on its command
//! line instead, in `--additional-mcp-config` ([`McpRoute::ArgumentJson`]): `tether mcp --run
//! <id> -C <workspace>` with the run's id in its `TETHER_RUN_ID`, every tool allowed, so
//! questions and sign-offs are recorded under the run.
//!
//! `[human] ask_before` is enforced through Copilot CLI's permission requests: it asks its client
//! before each command, and tether answers by the run's rules ([`Gate::Acp`]). Its
//! configuration directory is `$COPILOT_HOME` (default `~/.copilot`): in a run, a copy of the
//! person's settings and instructions. Its launcher unpacks its own package into
//! `~/.cache/copilot`, which a run reads. Its model is GitHub's (a login, or a token in
//! `COPILOT_GITHUB_TOKEN`), or the person's own provider (`COPILOT_PROVIDER_BASE_URL`, with
//! `COPILOT_OFFLINE=true` for no GitHub at all).

use std::sync::Arc;

use crate::cli::{AgentCli, ConfigDir, ConfigFile, Gate, Resume, Version};
use crate::{AcpExecutor, McpRoute};

/// The arguments that start Copilot CLI as an ACP agent, never updating itself mid-run.
pub const ACP_ARGS: [&str; 2] = ["--acp", "--no-auto-update"];

/// Its argument taking MCP servers as JSON.
pub const MCP_CONFIG_FLAG: &str = "--additional-mcp-config";

/// Copilot CLI as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "copilot",
    title: "Copilot CLI",
    about: "GitHub Copilot CLI, over ACP, the same way",
    program: "copilot",
    install: "npm install -g @github/copilot",
    // The oldest release its tests have passed with (`--acp`, `--additional-mcp-config`, its
    // native launcher; 1.0.0 from npm needs Node 24 and fails them here).
    minimum: Version::new(1, 0, 102),
    // Its token (`COPILOT_GITHUB_TOKEN`), its own provider (`COPILOT_PROVIDER_*`), model and
    // settings (`COPILOT_MODEL`, `COPILOT_OFFLINE`), and which GitHub it signs in to.
    env_prefixes: &["COPILOT_", "GH_HOST"],
    config_dir: ConfigDir {
        var: "COPILOT_HOME",
        default: ".copilot",
        within: None,
        files: &[
            // Its settings and who is signed in. Not `mcp-config.json`: the run's MCP server is
            // tether's.
            ConfigFile::setting("config.json"),
            ConfigFile::setting("settings.json"),
            ConfigFile::setting("copilot-instructions.md"),
            ConfigFile::shared("agents"),
            ConfigFile::shared("skills"),
        ],
    },
    // Its key comes from its login, `COPILOT_GITHUB_TOKEN` or `COPILOT_PROVIDER_API_KEY`.
    key: None,
    gate: Gate::ACP,
    // A continued session is taken up over ACP (`session/load`), not by arguments.
    resume: Resume::OVER_ACP,
    // Copilot CLI is its own ACP agent.
    acp_adapter: None,
    home_reads: &[".cache/copilot"],
    pin: None,
    executor: |settings, run, desk| {
        Arc::new(
            AcpExecutor::new(settings.leading(&ACP_ARGS), run, desk)
                .with_mcp_route(McpRoute::ArgumentJson(MCP_CONFIG_FLAG))
                .checking_version(&CLI),
        )
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_acp_arguments_come_before_the_persons() {
        let mut settings = crate::cli::test_support::settings("copilot");
        settings.args = vec!["--model".into(), "gpt-5".into()];
        let args = settings.leading(&ACP_ARGS).args;
        assert_eq!(args, ["--acp", "--no-auto-update", "--model", "gpt-5"]);
    }
}
