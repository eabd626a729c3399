//! `[executor] kind = "codex"` end to end with the real Codex CLI (its path in
//! `TETHER_TEST_CODEX`, installed by ./test.sh) against the fake model server speaking the
//! Responses API: the agents' contract ([`crate::suite::agent_contract`]: the promise kept, its
//! usage, `ask_human`, cancelling), what its request and transcript show, a killed loop resumes,
//! a usage limit is recognised, and a goal is signed off through `complete_goal`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::agents::{
    diagnose, only_run_dir, processes_in, ralph, ralph_waits_out_one_limit, required_cli, start,
    status, tool_calls,
};
use crate::common::{PATIENCE, model_table, pending_question, run, text, wait_output};
use crate::suite::agent_contract::{AgentCli, AgentWorkspace, agent_contract};

/// The real `codex` binary; a test without it fails (./test.sh installs it).
pub(crate) fn codex() -> PathBuf {
    required_cli("TETHER_TEST_CODEX", "the Codex CLI")
}

/// A workspace whose tether.toml runs Codex on a fake model server, with Codex's own home (its
/// configuration: the fake provider) in a directory of its own, outside the workspace.
pub(crate) struct Workspace {
    dir: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
}

impl Workspace {
    pub(crate) fn new(server: &FakeModelServer, extra: &str) -> Self {
        let ws = Workspace {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        ws.configure(server, extra);
        ws
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Sets `line` (`key = value`) in tether.toml's `[executor]`.
    pub(crate) fn executor_setting(&self, line: &str) {
        let path = self.path().join("tether.toml");
        let toml = fs::read_to_string(&path).unwrap();
        fs::write(
            &path,
            toml.replacen("[executor]\n", &format!("[executor]\n{line}\n"), 1),
        )
        .unwrap();
    }

    /// Writes Codex's config.toml (the fake provider, no retries) and tether.toml (Codex on
    /// it, then `extra`). Codex's HOME is its own directory too: Codex snapshots a login
    /// shell at start, and a turn killed mid-snapshot must not leave the developer's shell
    /// start-up (e.g. a version manager's lock) half done for every later test.
    fn configure(&self, server: &FakeModelServer, extra: &str) {
        let codex_config = format!(
            "model = \"fake-model\"\nmodel_provider = \"fake\"\n\
             check_for_update_on_startup = false\n\
             [model_providers.fake]\nname = \"Fake\"\nbase_url = {base:?}\n\
             env_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            base = server.base_url(Api::OpenAiResponses),
        );
        fs::write(self.home.path().join("config.toml"), codex_config).unwrap();
        let toml = format!(
            "[executor]\nkind = \"codex\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
             [executor.env]\nCODEX_HOME = {home:?}\nHOME = {home:?}\n\
             FAKE_API_KEY = \"sk-fake\"\n{extra}",
            program = codex().display().to_string(),
            home = self.home.path().display().to_string(),
        );
        fs::write(self.path().join("tether.toml"), toml).unwrap();
    }
}

/// Codex for the contract.
struct Codex;

impl AgentCli for Codex {
    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let Workspace { dir, home } = Workspace::new(server, "");
        AgentWorkspace {
            dir,
            _beside: Some(home),
        }
    }

    /// tether's tools reach the model in Codex's namespace for the tether server; the raw
    /// stream is the iteration's transcript.
    fn kept_promise(dir: &Path, server: &FakeModelServer) {
        let first = &server.requests()[0];
        assert_eq!(first.path, "/v1/responses");
        let body: Value = serde_json::from_str(&first.raw_body).unwrap();
        let namespace = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "namespace" && t["name"] == "mcp__tether")
            .unwrap_or_else(|| panic!("no mcp__tether namespace: {}", first.raw_body));
        let names: Vec<&str> = namespace["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        for tool in ["ask_human", "complete_goal", "cancel_goal", "plan_status"] {
            assert!(names.contains(&tool), "{tool} missing from {names:?}");
        }
        let transcript =
            fs::read_to_string(only_run_dir(dir).join("iteration-0001.jsonl")).unwrap();
        assert!(transcript.contains("\"turn.completed\""), "{transcript}");
    }
}

agent_contract!(contract, Codex);

/// The agent: asks its question until a request carries `answer` (delivered to a resumed run
/// in its prompt, or as the tool's result), then keeps the promise.
pub(crate) fn asks_until(answer: &'static str) -> Script {
    Script::from_fn(move |req: &Request| {
        if serde_json::to_string(req).unwrap().contains(answer) {
            Turn::text("Going with it. <promise>DONE</promise>")
        } else {
            Turn::tool(
                "mcp__tether__ask_human",
                json!({"question": "Wait for me?", "context": "a long wait", "confidence": 10}),
            )
        }
    })
}

#[test]
fn a_loop_killed_mid_iteration_resumes_and_finishes() {
    const ANSWER: &str = "Yes, wait.";
    let (_rt, server) = start(asks_until(ANSWER));
    let ws = Workspace::new(&server, "");
    let mut loop_ = ralph(ws.path(), "Ask and wait.");
    let q = pending_question(ws.path());
    loop_.kill().unwrap();
    loop_.wait().unwrap();
    let resumed = crate::common::spawn(ws.path(), &["resume"]);
    let out = run(ws.path(), &["answer", q["id"].as_str().unwrap(), ANSWER]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(resumed);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(ws.path(), &done)
    );
    assert_eq!(status(ws.path())["status"], "completed");
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.raw_body.contains(ANSWER)),
        "the answer reached the agent"
    );
    wait_until("the killed loop's codex to be gone", PATIENCE, || {
        processes_in(ws.path()).is_empty().then_some(())
    })
    .unwrap();
}

#[test]
fn a_usage_limit_is_waited_out_then_the_iteration_succeeds_without_a_failure() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("Done now. <promise>DONE</promise>")
    }));
    // Codex's own retries are off (config.toml), so the 429 fails its turn at once.
    server.fault_next(1, tether_testkit::Fault::RateLimited { retry_after: None });
    let ws = Workspace::new(&server, "");
    ws.executor_setting("usage_backoff_secs = 1");
    let wait = &ralph_waits_out_one_limit(ws.path(), "Write the notes.")["event"];
    assert!(
        wait["message"]
            .as_str()
            .unwrap()
            .contains("429 Too Many Requests"),
        "{wait}"
    );
    assert_eq!(server.request_count(), 2);
}

const PLAN: &str = "# Plan: numbers

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum of its arguments
verify: grep -q 'a + b' src/lib.rs
failure_modes:
- the grep matches a comment
- add is never called

## Log
";

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

#[test]
fn a_goal_loop_with_codex_signs_off_through_complete_goal_over_mcp() {
    let (rt, agent) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            // Codex's own shell writes the function (inside its workspace-write sandbox).
            None => Turn::tool(
                "exec_command",
                json!({"cmd": format!("printf '%s' '{LIB}' > src/lib.rs")}),
            ),
            Some((Some("exec_command"), _)) => Turn::tool(
                "mcp__tether__complete_goal",
                json!({"id": "add", "evidence": "grep finds a + b", "paths": ["src/lib.rs"]}),
            ),
            Some((_, result)) => Turn::text(format!("Signed off: {result}")),
        }
    }));
    let judge = rt
        .block_on(FakeModelServer::start(Script::turns([
            Turn::tool("read", json!({"path": "src/lib.rs"})),
            Turn::text(format!(
                "Read it.\n```json\n{}\n```",
                json!({
                    "verdict": "accept",
                    "summary": "add adds",
                    "checks": [{"path": "src/lib.rs", "quote": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b",
                                "observation": "the function adds"}],
                    "missing": [],
                })
            )),
        ])))
        .unwrap();
    let ws = Workspace::new(
        &agent,
        &model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
    );
    fs::create_dir_all(ws.path().join("src")).unwrap();
    fs::write(ws.path().join("plan.md"), PLAN).unwrap();
    let out = run(ws.path(), &["run", "--approve", "--max-iterations", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(ws.path(), &out));
    assert!(
        text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        fs::read_to_string(ws.path().join("src/lib.rs")).unwrap(),
        LIB
    );
    let plan = fs::read_to_string(ws.path().join("plan.md")).unwrap();
    assert!(plan.contains("add signed off:"), "{plan}");
    assert_eq!(
        judge.request_count(),
        2,
        "the judge read the file, then accepted"
    );
    let tools: Vec<String> = tool_calls(ws.path()).into_iter().map(|(t, _)| t).collect();
    assert_eq!(tools, ["shell", "complete_goal"]);
}
