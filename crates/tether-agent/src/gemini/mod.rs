//! The `gemini` executor: Gemini CLI (`gemini --acp`) as the agent, driven over the Agent Client
//! Protocol by tether's [`AcpExecutor`], with tether's tools over MCP.
//!
//! Gemini CLI is started once per run with `--acp --skip-trust`: without `--skip-trust` it
//! drops the MCP servers a `session/new` names in a folder it has not been told to trust, and
//! the agent would find no `ask_human`. tether's server (`tether mcp --run <id> -C <workspace>`,
//! the run's id also in its `TETHER_RUN_ID`) comes in every `session/new`, the protocol's own way.
//! Gemini CLI is offered no file reads and writes through tether (ACP `fs` false): it reads a
//! file before writing it, and takes tether's answer for a missing file for a failure, so it
//! could not create one; it reads and writes the workspace itself, inside tether's sandbox.
//!
//! `[human] ask_before` is enforced through Gemini CLI's permission requests: in its default
//! approval mode it asks its client before each command, and tether answers by the run's rules
//! ([`Gate::Acp`]). Its configuration directory is `$GEMINI_CLI_HOME/.gemini` (default
//! `~/.gemini`): in a run, a copy of the person's settings, instructions and login.

use std::sync::Arc;

use crate::AcpExecutor;
use crate::cli::{AgentCli, ConfigDir, ConfigFile, Gate, Resume, Version};

/// The arguments that start Gemini CLI as an ACP agent trusting the workspace for the session.
pub const ACP_ARGS: [&str; 2] = ["--acp", "--skip-trust"];

/// Gemini CLI as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "gemini",
    title: "Gemini CLI",
    about: "Gemini CLI, over ACP, the same way",
    program: "gemini",
    install: "npm install -g @google/gemini-cli (with Node 20 or newer)",
    // `--acp` and `--skip-trust`.
    minimum: Version::new(0, 61, 0),
    // Its key and endpoint (`GEMINI_API_KEY`, `GOOGLE_GEMINI_BASE_URL`, `GOOGLE_API_KEY`,
    // `GOOGLE_CLOUD_PROJECT`, `GOOGLE_GENAI_USE_VERTEXAI`), its model and settings.
    env_prefixes: &["GEMINI_", "GOOGLE_"],
    config_dir: ConfigDir {
        var: "GEMINI_CLI_HOME",
        default: ".gemini",
        within: Some(".gemini"),
        files: &[
            // Its Google login (OAuth tokens it refreshes) and the account it names.
            ConfigFile::credential("oauth_creds.json"),
            ConfigFile::credential("google_accounts.json"),
            // Its settings, instructions and variables (a `.env` may hold its key).
            ConfigFile::setting("settings.json"),
            ConfigFile::setting("GEMINI.md"),
            ConfigFile::setting(".env"),
            ConfigFile::setting("installation_id"),
            ConfigFile::shared("extensions"),
            ConfigFile::shared("commands"),
            ConfigFile::shared("skills"),
            ConfigFile::shared("policies"),
        ],
    },
    // Its key comes from `GEMINI_API_KEY` or `GOOGLE_API_KEY` (passed by their prefixes), or
    // its login.
    key: None,
    gate: Gate::ACP,
    // A continued session is taken up over ACP (`session/load`), not by arguments.
    resume: Resume::OVER_ACP,
    // Gemini CLI is its own ACP agent.
    acp_adapter: None,
    home_reads: &[],
    pin: None,
    executor: |settings, run, desk| {
        Arc::new(
            AcpExecutor::new(settings.leading(&ACP_ARGS), run, desk)
                .without_fs()
                .checking_version(&CLI),
        )
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_acp_arguments_come_before_the_persons() {
        let mut settings = crate::cli::test_support::settings("gemini");
        settings.args = vec!["--model".into(), "gemini-2.5-flash".into()];
        let args = settings.leading(&ACP_ARGS).args;
        assert_eq!(
            args,
            ["--acp", "--skip-trust", "--model", "gemini-2.5-flash"]
        );
    }
}
