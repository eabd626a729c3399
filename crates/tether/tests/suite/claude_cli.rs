//! `[executor] kind = "claude"` end to end with the real Claude Code CLI (its path in
//! `TETHER_TEST_CLAUDE`, installed by ./test.sh) against the fake model server: the agents'
//! contract ([`crate::suite::agent_contract`]: the promise kept, its usage, `ask_human`,
//! cancelling), what its request and transcript show, a goal signed off through
//! `complete_goal`, and a command it would ask about refused unattended.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{LIB, diagnose, only_run_dir, ralph, required_cli, start};
use crate::common::wait_output;
use crate::suite::agent_contract::{
    AgentCli, AgentWorkspace, agent_contract, signs_off_through_complete_goal,
};

/// The real `claude` binary; a test without it fails (./test.sh installs it).
pub(crate) fn claude() -> PathBuf {
    required_cli("TETHER_TEST_CLAUDE", "Claude Code")
}

/// Claude Code run by hand in `ws`, as a person wires `tether mcp` into it: `prompt` headless
/// with the MCP servers of `ws/mcp.json` only and `allowed` tools allowed, on `server`, with a
/// configuration directory of the workspace's; stdout and stderr piped.
pub(crate) fn by_hand(
    ws: &Path,
    server: &FakeModelServer,
    prompt: &str,
    allowed: &str,
) -> std::process::Command {
    fs::create_dir_all(ws.join(".claude-config")).unwrap();
    let mut c = std::process::Command::new(claude());
    crate::common::isolate(&mut c)
        .args(["-p", prompt, "--verbose"])
        .args(["--output-format", "stream-json", "--strict-mcp-config"])
        .arg("--mcp-config")
        .arg(ws.join("mcp.json"))
        .args(["--allowedTools", allowed])
        .current_dir(ws)
        .env("ANTHROPIC_BASE_URL", server.base_url(Api::Anthropic))
        .env("ANTHROPIC_API_KEY", "sk-fake")
        .env("CLAUDE_CONFIG_DIR", ws.join(".claude-config"))
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// A workspace whose tether.toml runs Claude Code on `server`, isolated from the user's own
/// Claude configuration.
pub(crate) fn workspace(server: &FakeModelServer, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    configure(dir.path(), server, extra);
    dir
}

/// Writes `dir`'s tether.toml: Claude Code on `server`, then `extra`.
pub(crate) fn configure(dir: &Path, server: &FakeModelServer, extra: &str) {
    configure_with(dir, server, "", extra);
}

/// Writes `dir`'s tether.toml: Claude Code on `server` with the `[executor]` lines `executor`,
/// then `extra`.
pub(crate) fn configure_with(dir: &Path, server: &FakeModelServer, executor: &str, extra: &str) {
    configure_at(dir, server, &dir.join(".claude-config"), executor, extra);
}

/// [`configure_with`], with Claude Code's own configuration directory (the person's) at
/// `config_dir`.
pub(crate) fn configure_at(
    dir: &Path,
    server: &FakeModelServer,
    config_dir: &Path,
    executor: &str,
    extra: &str,
) {
    fs::create_dir_all(config_dir).unwrap();
    let toml = format!(
        "[executor]\nkind = \"claude\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         {executor}[executor.env]\nANTHROPIC_BASE_URL = {base:?}\nANTHROPIC_API_KEY = \"sk-fake\"\n\
         CLAUDE_CONFIG_DIR = {config:?}\nCLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = \"1\"\n\
         DISABLE_AUTOUPDATER = \"1\"\nDISABLE_TELEMETRY = \"1\"\n{extra}",
        program = claude().display().to_string(),
        base = server.base_url(Api::Anthropic),
        config = config_dir.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// Claude Code for the contract.
struct Claude;

impl AgentCli for Claude {
    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        AgentWorkspace {
            dir: workspace(server, ""),
            _beside: None,
        }
    }

    /// tether's tools are declared to the model directly (the native question tool is not),
    /// the raw stream is the iteration's transcript, and the MCP config sits next to it.
    fn kept_promise(dir: &Path, server: &FakeModelServer) {
        let first = &server.requests()[0];
        assert_eq!(first.path, "/v1/messages");
        for tool in tether_agent::CLAUDE_TOOLS {
            assert!(
                first.raw_body.contains(tool),
                "{tool} missing from the request"
            );
        }
        assert!(!first.raw_body.contains("\"AskUserQuestion\""));
        let run_dir = only_run_dir(dir);
        let transcript = fs::read_to_string(run_dir.join("iteration-0001.jsonl")).unwrap();
        assert!(transcript.contains("\"mcp_servers\""), "{transcript}");
        assert!(transcript.contains("\"type\":\"result\""), "{transcript}");
        let mcp: Value =
            serde_json::from_str(&fs::read_to_string(run_dir.join("claude-mcp.json")).unwrap())
                .unwrap();
        let args = &mcp["mcpServers"]["tether"]["args"];
        assert_eq!(args[0], "mcp");
        assert_eq!(args[1], "--run");
    }
}

agent_contract!(contract, Claude);

#[test]
fn a_goal_loop_with_claude_code_signs_off_through_complete_goal_over_mcp() {
    // Claude Code's own Write tool, then tether's complete_goal over MCP.
    signs_off_through_complete_goal(
        "Write",
        |dir| json!({"file_path": dir.join("src/lib.rs"), "content": LIB}),
        &configure,
    );
}

/// The stance the README documents: edits are allowed unattended, other commands are refused
/// (nobody can approve a prompt in `-p` mode) and the model is told so.
#[test]
fn a_command_claude_code_would_ask_about_is_refused_unattended() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("python3 -c \"open('{}', 'w')\"", marker.display());
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("Bash", json!({"command": command, "description": "probe"})),
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
        }
    }));
    configure(dir.path(), &server, "");
    let done = wait_output(ralph(dir.path(), "Run the probe."));
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &done)
    );
    assert!(!marker.exists(), "the command ran unattended");
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(last.contains("\"is_error\":true"), "{last}");
}
