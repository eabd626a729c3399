//! `[executor] kind = "pi"` end to end with the real pi (its path in `TETHER_TEST_PI`, installed
//! by ./test.sh) against the fake model server (chat completions, declared in the models.json of
//! a test's own pi directory): the loops run it, tether's tools reach it over `tether mcp`
//! through the run's pi directory (the agents' contract, [`crate::suite::agent_contract`]: the
//! promise kept, its usage, `ask_human`, cancelling), a usage limit is waited out, a killed loop
//! resumes. A missing pi and a server that does not connect (played by a stand-in) stop the run
//! with the fix.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::{FakeModelServer, Fault};
use tether_testkit::wait_until;

use crate::common::agents::{
    LIB, Leftovers, diagnose, only_run_dir, processes_in, ralph, ralph_waits_out_one_limit,
    required_cli, start, status, tool_calls,
};
use crate::common::{PATIENCE, pending_question, run, spawn, text, wait_exit, wait_output};
use crate::suite::agent_contract::{
    AgentCli, AgentWorkspace, agent_contract, signs_off_through_complete_goal,
};

/// The real pi; a test without it fails (./test.sh installs it).
fn pi() -> PathBuf {
    required_cli("TETHER_TEST_PI", "pi")
}

/// A workspace whose tether.toml runs pi on `server`.
fn workspace(server: &FakeModelServer, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    configure(dir.path(), server, extra);
    dir
}

/// Writes `dir`'s tether.toml: pi on `server`, then `extra`. pi's own directory (the user's, as
/// far as tether knows) is `dir/.pi-user`: the fake model in models.json, pi's own retries off
/// so a failed model call ends the turn at once.
pub(crate) fn configure(dir: &Path, server: &FakeModelServer, extra: &str) {
    configure_at(dir, server, &dir.join(".pi-user"), extra);
}

/// [`configure`], with pi's own directory (the person's) at `user`.
pub(crate) fn configure_at(dir: &Path, server: &FakeModelServer, user: &Path, extra: &str) {
    fs::create_dir_all(user).unwrap();
    let models = json!({"providers": {"fake": {
        "baseUrl": server.base_url(Api::OpenAiChat),
        "api": "openai-completions",
        "apiKey": "sk-fake",
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
    }}});
    fs::write(user.join("models.json"), models.to_string()).unwrap();
    fs::write(user.join("settings.json"), r#"{"retry":{"enabled":false}}"#).unwrap();
    let toml = format!(
        "[executor]\nkind = \"pi\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         args = [\"--model\", \"fake/fake-model\"]\n\
         [executor.env]\nPI_CODING_AGENT_DIR = {user:?}\nPI_OFFLINE = \"1\"\n{extra}",
        program = pi().display().to_string(),
        user = user.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// pi for the contract.
struct Pi;

impl AgentCli for Pi {
    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        AgentWorkspace {
            dir: workspace(server, ""),
            _beside: None,
        }
    }

    /// tether's tools are declared to the model directly, next to pi's own; the raw stream is
    /// the iteration's transcript; the run's pi directory holds tether's server and copies of
    /// the user's files (the fake model is found), whose own directory gained no mcp.json.
    fn kept_promise(dir: &Path, server: &FakeModelServer) {
        let first = &server.requests()[0];
        assert_eq!(first.path, "/v1/chat/completions");
        for tool in tether_agent::CLAUDE_TOOLS {
            assert!(
                first.raw_body.contains(tool),
                "{tool} missing from the request"
            );
        }
        assert!(first.raw_body.contains("\"bash\""));
        let run_dir = only_run_dir(dir);
        let transcript = fs::read_to_string(run_dir.join("iteration-0001.jsonl")).unwrap();
        assert!(
            transcript.contains("\"type\":\"agent_settled\""),
            "{transcript}"
        );
        let mcp: Value =
            serde_json::from_str(&fs::read_to_string(run_dir.join("pi-mcp.json")).unwrap())
                .unwrap();
        assert_eq!(mcp["mcpServers"]["tether"]["exposure"], "direct");
        assert_eq!(mcp["mcpServers"]["tether"]["args"][1], "--run");
        assert!(!dir.join(".pi-user/mcp.json").exists());
    }
}

agent_contract!(contract, Pi);

#[test]
fn a_goal_loop_with_pi_signs_off_through_complete_goal_over_mcp() {
    // pi's own write tool, then tether's complete_goal over MCP.
    let done = signs_off_through_complete_goal(
        "write",
        |_| json!({"path": "src/lib.rs", "content": LIB}),
        &configure,
    );
    let calls: Vec<String> = tool_calls(done.dir.path())
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(calls, ["write", "complete_goal"]);
}

/// The agent asks until a request carries the human's answer, then keeps the promise.
fn asks_until_answered() -> Script {
    Script::from_fn(|req: &Request| {
        if serde_json::to_string(req).unwrap().contains("Teal") {
            Turn::text("Going with teal. <promise>DONE</promise>")
        } else {
            Turn::tool(
                "mcp__tether__ask_human",
                json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
            )
        }
    })
}

#[test]
fn a_loop_killed_mid_iteration_resumes_and_finishes() {
    let (_rt, server) = start(asks_until_answered());
    let dir = workspace(&server, "");
    let _leftovers = Leftovers(dir.path());
    let mut child = ralph(dir.path(), "Pick the logo colour.");
    let q = pending_question(dir.path());
    child.kill().unwrap();
    wait_exit(&mut child);
    let killed = status(dir.path());
    assert_eq!(killed["orphaned"], true);
    assert_eq!(killed["in_progress"], 1);
    // The answer comes while nobody drives the run; the resumed iteration is told it.
    let out = run(dir.path(), &["answer", q["id"].as_str().unwrap(), "Teal."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let resumed = wait_output(spawn(dir.path(), &["resume"]));
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &resumed)
    );
    assert_eq!(status(dir.path())["status"], "completed");
    wait_until("the first iteration's pi to finish too", PATIENCE, || {
        processes_in(dir.path()).is_empty().then_some(())
    })
    .unwrap();
}

#[test]
fn a_usage_limit_is_waited_out_and_the_same_iteration_runs_again() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("Done now. <promise>DONE</promise>")
    }));
    server.fault_on(
        0,
        Fault::UsageLimit {
            message: "You have hit your usage limit. Try again in 1 second.".into(),
        },
    );
    let dir = workspace(&server, "");
    let wait = ralph_waits_out_one_limit(dir.path(), "Go.");
    let message = wait["event"]["message"].as_str().unwrap();
    assert!(message.starts_with("429: "), "{message}");
    assert!(message.contains("You have hit your usage limit. Try again in 1 second."));
    let ms = wait["event"]["until_ms"].as_i64().unwrap() - wait["at_ms"].as_i64().unwrap();
    assert!((1000..=1100).contains(&ms), "{ms}");
    assert_eq!(server.request_count(), 2);
}

#[test]
fn a_missing_pi_is_an_error_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[executor]\nkind = \"pi\"\nprogram = \"/nonexistent/pi\"\n";
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let out = wait_output(ralph(dir.path(), "Hi."));
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("pi does not run: `/nonexistent/pi --version` could not start")
            && all.contains("npm install -g @earendil-works/pi-coding-agent"),
        "{all}"
    );
}

#[test]
fn an_mcp_server_that_does_not_connect_stops_the_run_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    // A stand-in for pi whose `pi mcp list` finds tether's server failed; a turn would run on.
    let fake = dir.path().join("fake-pi");
    fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 1.5.2; exit 0; }\n\
         [ \"$1\" = mcp ] && { echo 'tether: failed (direct, global)'; echo '  spawn ENOENT'; exit 1; }\n\
         touch turn-ran; exec sleep 600\n",
    )
    .unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let toml = format!(
        "[executor]\nkind = \"pi\"\nprogram = {:?}\n",
        fake.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let out = wait_output(ralph(dir.path(), "Hi."));
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains(
            "pi could not start tether's MCP server (`pi mcp list`: tether: failed (direct, \
             global); spawn ENOENT)"
        ),
        "{all}"
    );
    assert!(!dir.path().join("turn-ran").exists());
}
