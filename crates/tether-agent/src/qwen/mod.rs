//! `[executor] kind = "qwen"`: Qwen Code (`qwen --acp`) as the agent, driven over the Agent
//! Client Protocol by tether's own [`AcpExecutor`], with tether's tools over MCP.
//!
//! Qwen Code is started once per run in ACP mode with `--approval-mode default`, so every file
//! edit and shell command it makes is first a `session/request_permission` to tether, decided
//! by the run's `[human] ask_before` rules and `[executor] permissions` ([`Gate::Acp`]); a later
//! `--approval-mode` in `[executor] args` wins.
//!
//! tether's MCP server is given on its command line (`--mcp-config`, [`mcp_config`]) rather than
//! in `session/new`: a session's server gets Qwen Code's defaults, which keep its tools behind
//! `tool_search` (the model would find `ask_human` only by searching for it) and time a call out
//! after ten minutes, however long a person takes to answer. Its own configuration of the
//! server keeps the tools declared in every request (`alwaysLoadTools`), trusts them (no
//! confirmation of tether's own tools) and waits as long as tether's tool timeout.
//!
//! Its settings are read anew for every session, from the workspace (`.qwen/settings.json`) and
//! from its own directory, both of which the agent can write: a `tools.allowed` there would let a
//! command run without asking. tether pins system settings for the run ([`pin`]), which Qwen
//! Code reads over both, out of the agent's reach: `permissions.ask` rules for its shell, edit
//! and write tools, which win over every `allow` rule.
//!
//! It is started with `QWEN_CODE_LEGACY_MCP_BLOCKING=1`: it then connects to tether's server
//! before the session's first model request, so the first request already declares tether's
//! tools (otherwise it connects in the background and a busy machine loses the race).
//!
//! It reads its settings and logins from `QWEN_HOME` (default `~/.qwen`): in a sandboxed run,
//! the run's own copy of it ([`crate::cli::RunConfigDir`]). Its model comes from its settings or
//! the `OPENAI_*` variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`), passed on.

use std::sync::Arc;

use serde_json::json;

use crate::acp::{AcpExecutor, McpRoute, ServerSpec};
use crate::cli::{AgentCli, ConfigDir, ConfigFile, Gate, Resume, Version};

/// Qwen Code as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "qwen",
    title: "Qwen Code",
    about: "Qwen Code over ACP, the same way",
    program: "qwen",
    install: "npm install -g @qwen-code/qwen-code (with Node 22 or newer)",
    // ACP with `--acp`, `--mcp-config` servers whose tools stay declared (`alwaysLoadTools`).
    minimum: Version::new(0, 24, 4),
    env_prefixes: &[
        "QWEN_",
        "OPENAI_",
        "ANTHROPIC_",
        "GEMINI_",
        "DASHSCOPE_",
        "NODE_",
    ],
    config_dir: ConfigDir {
        var: "QWEN_HOME",
        default: ".qwen",
        within: None,
        files: &[
            // Its Qwen OAuth login, refreshed as it runs.
            ConfigFile::credential("oauth_creds.json"),
            // Its settings (model providers, auth type), variables and instructions.
            ConfigFile::setting("settings.json"),
            ConfigFile::setting(".env"),
            ConfigFile::setting("QWEN.md"),
            ConfigFile::setting("installation_id"),
            ConfigFile::shared("skills"),
            ConfigFile::shared("agents"),
            ConfigFile::shared("commands"),
            ConfigFile::shared("extensions"),
            ConfigFile::shared("rules"),
        ],
    },
    // Its settings name a provider's key variable in many places (`modelProviders`, `.env`):
    // the `OPENAI_*` and other prefixes pass the usual ones.
    key: None,
    // `--approval-mode default` on the command line wins over its settings' approval mode.
    gate: Gate::ACP,
    // Sessions are ACP's: the executor continues its kept session itself.
    resume: Resume::OVER_ACP,
    acp_adapter: None,
    home_reads: &[],
    // System settings asking before every command, over whatever the agent writes.
    pin: Some(pin::pin),
    executor: |settings, run, desk| {
        let settings = settings
            .leading(&["--acp", "--approval-mode", "default"])
            .leading_env(MCP_BLOCKING, "1");
        Arc::new(AcpExecutor::new(settings, run, desk).with_mcp_route(McpRoute::Args(mcp_config)))
    },
};

/// Set to `1`, Qwen Code connects to its MCP servers before its first model request. Left
/// unset, it connects in the background and an ACP prompt does not wait: under load the turn's
/// first request goes out without `ask_human` and `complete_goal`.
const MCP_BLOCKING: &str = "QWEN_CODE_LEGACY_MCP_BLOCKING";

/// `--mcp-config <json>`: tether's server for Qwen Code, its tools declared in the first request
/// (`alwaysLoadTools`), trusted, and a call waiting as long as a person may take.
pub(crate) fn mcp_config(server: &ServerSpec) -> Vec<String> {
    let mut entry = json!({
        "command": server.command,
        "args": server.args,
        "timeout": u64::try_from(server.tool_timeout.as_millis()).unwrap_or(u64::MAX),
        "trust": true,
        "alwaysLoadTools": true,
    });
    if let Some(run) = &server.run {
        entry["env"] = json!({ "TETHER_RUN_ID": run });
    }
    let config = json!({ "mcpServers": { server.name: entry } });
    vec!["--mcp-config".to_owned(), config.to_string()]
}

mod pin;

#[cfg(test)]
mod tests;
