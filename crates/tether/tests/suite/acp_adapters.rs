//! `[executor] kind = "acp"` end to end with the real ACP adapters of Claude Code
//! (`@zed-industries/claude-agent-acp`, `TETHER_TEST_CLAUDE_ACP`) and Codex
//! (`@zed-industries/codex-acp`, `TETHER_TEST_CODEX_ACP`), installed by ./test.sh, against the
//! fake model server: the agents' contract ([`crate::suite::agent_contract`]: a Ralph loop keeps
//! its promise and reports its usage, `ask_human`, cancelling leaves no process behind), a goal
//! signs off through `complete_goal` over the MCP server tether passed, an `ask_before` command
//! waits for `tether answer` and a "Reject" reaches the model.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use tether_store::Event;

use crate::common::agents::{
    LIB, PLAN, accepting_judge, diagnose, events, ralph, required_cli, start,
};
use crate::common::{model_table, pending_question, run, runtime, text, wait_output};
use crate::suite::agent_contract::{AgentCli, AgentWorkspace, agent_contract};

fn claude_acp() -> PathBuf {
    required_cli("TETHER_TEST_CLAUDE_ACP", "Claude Code's ACP adapter")
}

fn codex_acp() -> PathBuf {
    required_cli("TETHER_TEST_CODEX_ACP", "Codex's ACP adapter")
}

/// `dir`'s tether.toml: Claude's adapter on `server`, isolated from the user's own Claude
/// configuration, then `extra`.
fn claude_workspace(dir: &Path, server: &FakeModelServer, extra: &str) {
    let config_dir = dir.join(".claude-config");
    fs::create_dir_all(&config_dir).unwrap();
    let toml = format!(
        "{extra}\n[executor]\nkind = \"acp\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         [executor.env]\nANTHROPIC_BASE_URL = {base:?}\nANTHROPIC_API_KEY = \"sk-fake\"\n\
         CLAUDE_CONFIG_DIR = {config:?}\nCLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = \"1\"\n\
         DISABLE_AUTOUPDATER = \"1\"\nDISABLE_TELEMETRY = \"1\"\n",
        program = claude_acp().display().to_string(),
        base = server.base_url(Api::Anthropic),
        config = config_dir.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// Claude Code's adapter for the contract.
struct ClaudeAdapter;

impl AgentCli for ClaudeAdapter {
    /// Its calls are reported by kind (`other`) and its own title (`mcp__tether__ask_human`).
    const NAMES_TOOL_CALLS: bool = false;

    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let dir = tempfile::tempdir().unwrap();
        claude_workspace(dir.path(), server, "");
        AgentWorkspace { dir, _beside: None }
    }

    /// tether's tools reached the model with the prompt, and the cost came with the usage (from
    /// the adapter's usage update, sent with `"used": null`, which tether mends).
    fn kept_promise(dir: &Path, server: &FakeModelServer) {
        let requests = server.requests();
        let turn = requests
            .iter()
            .find(|r| r.raw_body.contains("Write the notes."))
            .unwrap();
        for tool in ["mcp__tether__ask_human", "mcp__tether__complete_goal"] {
            assert!(
                turn.raw_body.contains(tool),
                "{tool} missing from the request"
            );
        }
        let costs: Vec<Option<f64>> = events(dir)
            .into_iter()
            .filter_map(|e| match e {
                Event::IterationUsage { cost_usd, .. } => Some(cost_usd),
                _ => None,
            })
            .collect();
        assert!(costs.len() == 1 && costs[0].is_some(), "{costs:?}");
    }
}

agent_contract!(claude_contract, ClaudeAdapter);

/// Codex's adapter for the contract.
struct CodexAdapter;

impl AgentCli for CodexAdapter {
    /// Its prompt's result and updates carry no token counts.
    const REPORTS_USAGE: bool = false;
    /// Its calls are reported by kind (`other`) and its own title (`Tool: tether/ask_human`).
    const NAMES_TOOL_CALLS: bool = false;

    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let (dir, home) = codex_workspace(server, "");
        AgentWorkspace {
            dir,
            _beside: Some(home),
        }
    }
}

agent_contract!(codex_contract, CodexAdapter);

#[test]
fn claudes_adapter_signs_a_goal_off_through_complete_goal() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("src/lib.rs").display().to_string();
    let rt = runtime();
    let agent = rt
        .block_on(FakeModelServer::start(Script::from_fn(
            move |req: &Request| match req.last_tool_result() {
                None => Turn::tool("Write", json!({"file_path": lib, "content": LIB})),
                Some((Some("Write"), _)) => Turn::tool(
                    "mcp__tether__complete_goal",
                    json!({"id": "add", "evidence": "grep finds a + b", "paths": ["src/lib.rs"]}),
                ),
                Some((_, result)) => Turn::text(format!("Signed off: {result}")),
            },
        )))
        .unwrap();
    let judge = accepting_judge(&rt);
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    claude_workspace(
        dir.path(),
        &agent,
        &model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
    );
    let out = run(dir.path(), &["run", "--approve", "--max-iterations", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    assert!(
        text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("src/lib.rs")).unwrap(),
        LIB
    );
}

#[test]
fn an_ask_before_command_of_claudes_adapter_waits_and_a_reject_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("touch {}", marker.display());
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("Bash", json!({"command": command, "description": "probe"})),
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
        }
    }));
    claude_workspace(dir.path(), &server, "[human]\nask_before = [\"touch\"]\n");
    let child = ralph(dir.path(), "Run the probe.");
    let question = pending_question(dir.path());
    assert!(
        question["question"].as_str().unwrap().contains("touch"),
        "{question}"
    );
    assert!(!marker.exists(), "held until answered");
    let out = run(
        dir.path(),
        &[
            "answer",
            question["id"].as_str().unwrap(),
            "Reject",
            "--as",
            "ana",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &done)
    );
    assert!(!marker.exists(), "a rejected command ran");
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(last.contains("refused permission"), "{last}");
}

/// A workspace whose tether.toml runs Codex's adapter on `server` (`extra` first), and Codex's
/// own home (its configuration: the fake provider) beside it.
fn codex_workspace(
    server: &FakeModelServer,
    extra: &str,
) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5.4\"\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\
             [model_providers.fake]\nname = \"Fake\"\nbase_url = {base:?}\n\
             env_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            base = server.base_url(Api::OpenAiResponses),
        ),
    )
    .unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{extra}\n[executor]\nkind = \"acp\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
             [executor.env]\nCODEX_HOME = {home:?}\nHOME = {home:?}\nFAKE_API_KEY = \"sk-fake\"\n",
            program = codex_acp().display().to_string(),
            home = home.path().display().to_string(),
        ),
    )
    .unwrap();
    (dir, home)
}

#[test]
fn codexs_adapter_signs_a_goal_off_through_complete_goal_with_tether_in_its_config() {
    let (rt, agent) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool(
                "mcp__tether__complete_goal",
                json!({"id": "add", "evidence": "grep finds a + b", "paths": ["src/lib.rs"]}),
            ),
            Some((_, result)) => Turn::text(format!("Signed off: {result}")),
        }
    }));
    let judge = accepting_judge(&rt);
    let (dir, _home) = codex_workspace(
        &agent,
        &model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
    );
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/lib.rs"), LIB).unwrap();
    fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    let out = run(dir.path(), &["run", "--approve", "--max-iterations", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    assert!(
        text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    // tether's server came through Codex's configuration, not session/new: the model saw its
    // tools all the same.
    let first = &agent.requests()[0];
    assert!(
        first.raw_body.contains("complete_goal"),
        "{}",
        first.raw_body
    );
}

#[test]
fn claudes_adapter_drafts_a_plan_reading_only_and_writing_it_through_tether() {
    use crate::suite::plan_cli::{EXISTING, drafted, results};
    let plan = drafted();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| match results(req) {
        // An attempt to write another file (refused: a drafting turn only reads), then the plan
        // through tether's tool (allowed).
        0 => Turn::tool(
            "Write",
            json!({"file_path": "src/evil.rs", "content": "fn main() {}"}),
        ),
        1 => Turn::tool("mcp__tether__write_plan", json!({"content": plan.clone()})),
        _ => Turn::text("Drafted `verbose`."),
    }));
    let dir = tempfile::tempdir().unwrap();
    claude_workspace(dir.path(), &server, "");
    fs::write(dir.path().join("greet.sh"), "echo \"Hello, $1!\"\n").unwrap();
    fs::write(dir.path().join("plan.md"), EXISTING).unwrap();
    let out = run(
        dir.path(),
        &[
            "plan",
            "new",
            "Add a --verbose flag to greet.sh",
            "--approve",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        drafted()
    );
    assert!(!dir.path().join("src/evil.rs").exists(), "{stderr}");
    let turn = server
        .requests()
        .into_iter()
        .find(|r| r.raw_body.contains("Add a --verbose flag"))
        .unwrap();
    assert!(turn.raw_body.contains("mcp__tether__write_plan"));
    assert!(
        turn.raw_body
            .contains("write goals into the plan file with tether's")
    );
}
