//! `[executor] kind = "copilot"` end to end with the real Copilot CLI (its path in
//! `TETHER_TEST_COPILOT`, installed by ./test.sh) on its own provider, the fake model server's
//! chat completions (`COPILOT_PROVIDER_BASE_URL`, offline: no GitHub at all): with
//! only its kind and program in tether.toml, the agents' contract
//! ([`crate::suite::agent_contract`]: a Ralph loop keeps its promise and reports its usage,
//! `ask_human` answered, cancelling leaves no process behind), a goal whose new file Copilot CLI
//! writes itself signs off through `complete_goal`, and an `ask_before` command waits for
//! `tether answer`; tether's server reached it through its command line, with the run's id.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{LIB, diagnose, ralph, required_cli, start};
use crate::common::{pending_question, run, text, wait_output};
use crate::suite::agent_contract::{
    AgentCli, AgentWorkspace, agent_contract, signs_off_through_complete_goal,
};

/// The real Copilot CLI; a test without it fails (./test.sh installs it).
fn copilot() -> PathBuf {
    required_cli("TETHER_TEST_COPILOT", "Copilot CLI")
}

/// A workspace whose tether.toml runs Copilot CLI on `server` (`extra` first), and Copilot CLI's
/// home (the person's, as far as tether knows: its settings choose the API key) beside it.
fn workspace(server: &FakeModelServer, extra: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    configure(dir.path(), home.path(), server, extra);
    (dir, home)
}

fn configure(dir: &Path, home: &Path, server: &FakeModelServer, extra: &str) {
    let toml = format!(
        "{extra}\n[executor]\nkind = \"copilot\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         [executor.env]\nCOPILOT_PROVIDER_BASE_URL = {base:?}\nCOPILOT_PROVIDER_API_KEY = \"sk-fake\"\n\
         COPILOT_MODEL = \"gpt-4.1\"\nCOPILOT_OFFLINE = \"true\"\nCOPILOT_HOME = {home:?}\n",
        program = copilot().display().to_string(),
        base = server.base_url(Api::OpenAiChat),
        home = home.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// Copilot CLI for the contract.
struct Copilot;

impl AgentCli for Copilot {
    /// Its calls are reported by its own titles.
    const NAMES_TOOL_CALLS: bool = false;

    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let (dir, home) = workspace(server, "");
        AgentWorkspace {
            dir,
            _beside: Some(home),
        }
    }

    /// The model was asked over chat completions with tether's tools declared.
    fn kept_promise(_dir: &Path, server: &FakeModelServer) {
        let requests = server.requests();
        let turn = requests
            .iter()
            .find(|r| r.raw_body.contains("Write the notes."))
            .unwrap();
        assert!(turn.path == "/v1/chat/completions", "{}", turn.path);
        for tool in ["ask_human", "complete_goal"] {
            assert!(
                turn.raw_body.contains(tool),
                "{tool} missing from the request"
            );
        }
    }
}

agent_contract!(contract, Copilot);

#[test]
fn a_goal_copilot_writes_a_new_file_for_signs_off_through_complete_goal() {
    let home = tempfile::tempdir().unwrap();
    signs_off_through_complete_goal(
        "create",
        |dir| json!({"path": dir.join("src/lib.rs"), "file_text": LIB}),
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

#[test]
fn an_ask_before_command_of_copilot_waits_and_a_reject_reaches_the_model() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let marker = dir.path().join("ran");
    let command = format!("touch {}", marker.display());
    // Copilot CLI may end its turn on a refusal instead of handing the model the tool's
    // result: the next iteration's prompt then carries tether's note of it.
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        let told = req
            .last_user_text()
            .is_some_and(|t| t.contains("tether refused"));
        match req.last_tool_result() {
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
            None if told => Turn::text("Told it was refused. <promise>DONE</promise>"),
            None => Turn::tool("bash", json!({"command": command, "description": "probe"})),
        }
    }));
    configure(
        dir.path(),
        home.path(),
        &server,
        "[human]\nask_before = [\"touch\"]\n",
    );
    let child = ralph(dir.path(), "Run the probe.");
    let question = pending_question(dir.path());
    assert!(
        question["question"].as_str().unwrap().contains("touch"),
        "{question}"
    );
    assert!(!marker.exists(), "held until answered");
    let id = question["id"].as_str().unwrap();
    let out = run(dir.path(), &["answer", id, "Reject", "--as", "ana"]);
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
    assert!(last.contains("tether refused"), "{last}");
}
