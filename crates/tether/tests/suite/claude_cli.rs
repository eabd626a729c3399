//! `[executor] kind = "claude"` end to end with the real Claude Code CLI (its path in
//! `TETHER_TEST_CLAUDE`, installed by ./test.sh) against the fake model server: the loop runs
//! it, tether's tools reach it over `tether mcp`, and cancelling leaves none of it running.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::agents::{
    LIB, PLAN, accepting_judge, diagnose, only_run_dir, processes_in, ralph, required_cli, start,
    status,
};
use crate::common::{PATIENCE, model_table, pending_question, run, runtime, text, wait_output};

/// The real `claude` binary; a test without it fails (./test.sh installs it).
pub(crate) fn claude() -> PathBuf {
    required_cli("TETHER_TEST_CLAUDE", "Claude Code")
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
    let config_dir = dir.join(".claude-config");
    fs::create_dir_all(&config_dir).unwrap();
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

#[test]
fn a_ralph_loop_with_claude_code_keeps_its_promise() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("All written. <promise>DONE</promise>")
    }));
    let dir = workspace(&server, "");
    let done = wait_output(ralph(dir.path(), "Write the notes."));
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &done)
    );
    assert_eq!(status(dir.path())["status"], "completed");
    let requests = server.requests();
    assert!(!requests.is_empty());
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    // tether's tools are declared to the model directly, the native question tool is not.
    for tool in tether_agent::CLAUDE_TOOLS {
        assert!(
            first.raw_body.contains(tool),
            "{tool} missing from the request"
        );
    }
    assert!(!first.raw_body.contains("\"AskUserQuestion\""));
    assert!(first.raw_body.contains("Write the notes."));
    // The raw stream is the iteration's transcript, and the MCP config sits next to it.
    let run_dir = only_run_dir(dir.path());
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

#[test]
fn ask_human_over_mcp_is_answered_with_tether_answer() {
    let (_rt, server) = start(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool(
                "mcp__tether__ask_human",
                json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
            ),
            Some((_, result)) => Turn::text(format!("Noted ({result}). <promise>DONE</promise>")),
        }
    }));
    let dir = workspace(&server, "");
    let child = ralph(dir.path(), "Pick the logo colour.");
    let q = pending_question(dir.path());
    assert_eq!(q["question"], "Which colour?");
    assert_eq!(q["run_id"], status(dir.path())["id"]);
    let out = run(
        dir.path(),
        &[
            "answer",
            q["id"].as_str().unwrap(),
            "Blue.",
            "--as",
            "carol",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(last.contains("Human replied: Blue."), "{last}");
    assert_eq!(status(dir.path())["status"], "completed");
    // The tool call is one of the run's events, with its one-line summary.
    let store = tether_store::Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let run_id = store.latest_run().unwrap().unwrap().id;
    let calls: Vec<(String, String)> = store
        .events(&run_id, tether_store::Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            Some(tether_store::Event::ToolCalled { tool, summary, .. }) => Some((tool, summary)),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [("ask_human".to_owned(), "ask_human Which colour?".to_owned())]
    );
}

#[test]
fn tether_cancel_leaves_no_claude_process_behind() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::tool(
            "mcp__tether__ask_human",
            json!({"question": "Wait for me?", "context": "cancel test", "confidence": 10}),
        )
    }));
    let dir = workspace(&server, "");
    let child = ralph(dir.path(), "Ask and wait.");
    pending_question(dir.path());
    let before = wait_until("claude to run", PATIENCE, || {
        let pids = processes_in(dir.path());
        (!pids.is_empty()).then_some(pids)
    })
    .unwrap();
    let out = run(dir.path(), &["cancel"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_ne!(done.status.code(), Some(0));
    wait_until("claude and its MCP server to be gone", PATIENCE, || {
        processes_in(dir.path()).is_empty().then_some(())
    })
    .unwrap_or_else(|e| panic!("{e}; were {before:?}"));
    assert_eq!(status(dir.path())["status"], "cancelled");
}

#[test]
fn a_goal_loop_with_claude_code_signs_off_through_complete_goal_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("src/lib.rs").display().to_string();
    let rt = runtime();
    // The agent writes the function with Claude Code's own Write tool, then calls tether's
    // complete_goal over MCP, then finishes.
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
    configure(
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
    let plan = fs::read_to_string(dir.path().join("plan.md")).unwrap();
    assert!(plan.contains("add signed off:"), "{plan}");
    assert_eq!(
        judge.request_count(),
        2,
        "the judge read the file, then accepted"
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
