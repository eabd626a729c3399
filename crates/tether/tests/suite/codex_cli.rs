//! `[executor] kind = "codex"` end to end with the real Codex CLI (its path in
//! `TETHER_TEST_CODEX`, installed by ./test.sh) against the fake model server speaking the
//! Responses API: the loop runs it, tether's tools reach it over `tether mcp`, a killed loop
//! resumes, a usage limit is recognised, and cancelling leaves none of it running.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::agent_cli::{
    diagnose, only_run_dir, processes_in, ralph, real_cli, start, status, tool_calls,
};
use crate::common::{PATIENCE, model_table, pending_question, run, text, wait_output};

/// The real `codex` binary; a test without it fails (./test.sh installs it).
fn codex() -> PathBuf {
    real_cli("TETHER_TEST_CODEX", "the Codex CLI")
}

/// A workspace whose tether.toml runs Codex on a fake model server, with Codex's own home (its
/// configuration: the fake provider) in a directory of its own, outside the workspace.
struct Workspace {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Workspace {
    fn new(server: &FakeModelServer, extra: &str) -> Self {
        let ws = Workspace {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        ws.configure(server, extra);
        ws
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes Codex's config.toml (the fake provider, no retries) and tether.toml (Codex on
    /// it, then `extra`).
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
             [executor.env]\nCODEX_HOME = {home:?}\nFAKE_API_KEY = \"sk-fake\"\n{extra}",
            program = codex().display().to_string(),
            home = self.home.path().display().to_string(),
        );
        fs::write(self.path().join("tether.toml"), toml).unwrap();
    }
}

#[test]
fn a_ralph_loop_with_codex_keeps_its_promise() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("All written. <promise>DONE</promise>")
    }));
    let ws = Workspace::new(&server, "");
    let done = wait_output(ralph(ws.path(), "Write the notes."));
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(ws.path(), &done)
    );
    assert_eq!(status(ws.path())["status"], "completed");
    let requests = server.requests();
    assert!(!requests.is_empty());
    let first = &requests[0];
    assert_eq!(first.path, "/v1/responses");
    eprintln!("{}", first.raw_body);
    // tether's tools reach the model in Codex's namespace for the tether server.
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
    assert!(first.raw_body.contains("Write the notes."));
    // The raw stream is the iteration's transcript.
    let transcript =
        fs::read_to_string(only_run_dir(ws.path()).join("iteration-0001.jsonl")).unwrap();
    assert!(transcript.contains("\"turn.completed\""), "{transcript}");
}
