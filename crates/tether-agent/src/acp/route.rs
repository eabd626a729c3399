//! How tether's MCP server reaches an ACP agent ([`McpRoute`]): in `session/new`, the protocol's
//! own way, or on the agent's command line for an agent that will not take it there as tether
//! serves it (a stdio server whose tools may wait days for a person).

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::cli::{SERVER, TOOL_TIMEOUT};

/// How tether's MCP server reaches the agent.
#[derive(Debug, Clone, Copy)]
pub enum McpRoute {
    /// In every `session/new` (`mcpServers`): the protocol's own way.
    Session,
    /// Through Codex's configuration overrides (`-c mcp_servers.tether.…`, with
    /// `tool_timeout_sec`), and none in `session/new`: Codex times out a session's MCP tools
    /// after 120 s, however long a person takes to answer.
    CodexConfig,
    /// As the `mcpServers` JSON (a local server: `command`, `args`, `env` with the run's id,
    /// every tool) in the agent's own argument `flag`, and none in `session/new`: Copilot CLI's
    /// `--additional-mcp-config`, which takes the stdio servers its `session/new` refuses.
    ArgumentJson(&'static str),
    /// On the agent's command line, as the function makes the arguments of the server, and
    /// none in `session/new`: the CLI's own configuration of a server carries what a session's
    /// cannot (a tool timeout, tools kept declared: Qwen Code's `--mcp-config`).
    Args(fn(&ServerSpec) -> Vec<String>),
}

/// tether's MCP server for a run, for an agent's own configuration of it ([`McpRoute::Args`]).
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Its name (`tether`).
    pub name: &'static str,
    /// The tether binary.
    pub command: String,
    /// Its arguments (`mcp --run <id> -C <workspace>`).
    pub args: Vec<String>,
    /// The run, once it exists (`TETHER_RUN_ID`).
    pub run: Option<String>,
    /// How long one of its tool calls may take.
    pub tool_timeout: Duration,
}

impl McpRoute {
    /// The route for `program`: Codex's adapter gets [`McpRoute::CodexConfig`].
    pub fn for_program(program: &str) -> Self {
        let name = program.rsplit('/').next().unwrap_or(program);
        if name.contains("codex-acp") {
            McpRoute::CodexConfig
        } else {
            McpRoute::Session
        }
    }

    /// Whether the server goes in `session/new`.
    pub(super) fn in_session(self) -> bool {
        matches!(self, McpRoute::Session)
    }

    /// The arguments that hand the agent tether's server, `tether` with `args`, for the run
    /// `run` once it exists (none when the server goes in `session/new`).
    pub(super) fn argv(self, tether: &Path, args: &[String], run: Option<String>) -> Vec<String> {
        let tether = tether.display().to_string();
        match self {
            McpRoute::Session => Vec::new(),
            McpRoute::CodexConfig => {
                let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
                let mut argv = vec![
                    "-c".to_owned(),
                    format!("mcp_servers.{SERVER}.command={}", toml_string(&tether)),
                    "-c".to_owned(),
                    format!("mcp_servers.{SERVER}.args=[{}]", args.join(",")),
                    "-c".to_owned(),
                    format!(
                        "mcp_servers.{SERVER}.tool_timeout_sec={}",
                        TOOL_TIMEOUT.as_secs()
                    ),
                ];
                if let Some(run) = run {
                    argv.extend([
                        "-c".to_owned(),
                        format!(
                            "mcp_servers.{SERVER}.env={{TETHER_RUN_ID={}}}",
                            toml_string(&run)
                        ),
                    ]);
                }
                argv
            }
            McpRoute::ArgumentJson(flag) => {
                let env = match run {
                    Some(run) => json!({"TETHER_RUN_ID": run}),
                    None => json!({}),
                };
                let servers = json!({"mcpServers": {SERVER: {
                    "type": "local",
                    "command": tether,
                    "args": args,
                    "env": env,
                    "tools": ["*"],
                    "timeout": u64::try_from(TOOL_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
                }}});
                vec![flag.to_owned(), servers.to_string()]
            }
            McpRoute::Args(make) => make(&ServerSpec {
                name: SERVER,
                command: tether,
                args: args.to_vec(),
                run,
                tool_timeout: TOOL_TIMEOUT,
            }),
        }
    }
}

/// `s` as a TOML basic string (JSON's escapes are TOML's).
fn toml_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::Value;

    use super::McpRoute;

    fn args() -> Vec<String> {
        ["mcp", "--run", "r1", "-C", "/ws"]
            .map(str::to_owned)
            .to_vec()
    }

    #[test]
    fn the_session_route_adds_no_argument() {
        let argv = McpRoute::Session.argv(Path::new("/bin/tether"), &args(), Some("r1".into()));
        assert!(argv.is_empty());
        assert!(McpRoute::Session.in_session());
        assert!(!McpRoute::ArgumentJson("--x").in_session());
    }

    #[test]
    fn codexs_route_names_the_server_with_its_timeout_and_the_runs_id() {
        let argv = McpRoute::CodexConfig.argv(Path::new("/bin/tether"), &args(), Some("r1".into()));
        assert!(argv.contains(&"mcp_servers.tether.command=\"/bin/tether\"".to_owned()));
        assert!(argv.contains(&"mcp_servers.tether.env={TETHER_RUN_ID=\"r1\"}".to_owned()));
    }

    #[test]
    fn a_json_argument_names_the_local_server_with_every_tool_and_the_runs_id() {
        let route = McpRoute::ArgumentJson("--additional-mcp-config");
        let argv = route.argv(Path::new("/bin/tether"), &args(), Some("r1".into()));
        assert_eq!(argv[0], "--additional-mcp-config");
        let json: Value = serde_json::from_str(&argv[1]).unwrap();
        let server = &json["mcpServers"]["tether"];
        assert_eq!(server["command"], "/bin/tether");
        assert_eq!(server["args"][2], "r1");
        assert_eq!(server["env"]["TETHER_RUN_ID"], "r1");
        assert_eq!(server["tools"][0], "*");
        let before = route.argv(Path::new("/bin/tether"), &args(), None);
        let json: Value = serde_json::from_str(&before[1]).unwrap();
        assert_eq!(json["mcpServers"]["tether"]["env"], serde_json::json!({}));
    }
}
