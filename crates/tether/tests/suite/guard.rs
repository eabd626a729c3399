//! Issue items 6 and 9 end to end, through the real binary: `ask_before` holds the agent's
//! command until a human answers (a no refuses it, a yes runs it; the global list and the goal's
//! both apply), a FIFO in the workspace never hangs the agent's `read` or the judge's, and
//! `tether cancel` ends a run whose agent is stuck waiting.

use std::fs;
use std::path::Path;

use nix::sys::stat::Mode;
use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{model_table, pending_question, run, runtime, spawn, text, wait_output};

/// The agent runs `command` with bash, then ends the turn with `DONE`.
fn runs(command: &'static str) -> Script {
    Script::from_fn(move |req: &Request| match req.last_tool_result() {
        None => Turn::tool("bash", json!({"command": command})),
        Some(_) => Turn::text("<promise>DONE</promise>"),
    })
}

/// The text of the last tool result the agent's model was sent.
fn last_result(server: &FakeModelServer) -> String {
    let requests = server.requests();
    let body: Value = serde_json::from_str(&requests.last().unwrap().raw_body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    last["content"].as_str().unwrap().to_owned()
}

fn answer(dir: &Path, text: &str) -> Value {
    let q = pending_question(dir);
    let out = run(dir, &["answer", q["id"].as_str().unwrap(), text]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::text(&out.stderr)
    );
    q
}

#[test]
fn a_global_ask_before_command_waits_for_a_human_and_a_no_refuses_it() {
    let rt = runtime();
    let server = rt
        .block_on(FakeModelServer::start(runs(
            "echo start && touch deployed.txt",
        )))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[human]\nask_before = [\"touch deployed.txt\"]\n",
            model_table("model", Api::OpenAiChat, &server, "fake")
        ),
    )
    .unwrap();
    let child = spawn(
        dir.path(),
        &["ralph", "Deploy.", "--completion-promise", "DONE"],
    );
    let q = answer(dir.path(), "no");
    assert_eq!(
        q["question"],
        "run `echo start && touch deployed.txt`? yes/no"
    );
    let context = q["context"].as_str().unwrap();
    assert!(
        context.contains("`touch deployed.txt` starts with `touch deployed.txt` ([human] ask_before in tether.toml)"),
        "{context}"
    );
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !dir.path().join("deployed.txt").exists(),
        "the command never ran"
    );
    let result = last_result(&server);
    assert!(
        result.starts_with("not run: `echo start && touch deployed.txt` needs a human's yes first"),
        "{result}"
    );
    assert!(result.contains("answered \"no\""), "{result}");
    assert!(
        !result.contains("start\n"),
        "nothing of the line ran: {result}"
    );
}

#[test]
fn a_goals_ask_before_applies_and_a_yes_runs_the_command() {
    let rt = runtime();
    let server = rt
        .block_on(FakeModelServer::start(Script::from_fn(|req: &Request| {
            match req.last_tool_result() {
                // The agent first strips the goal's ask_before from the plan: it still applies.
                None => Turn::tool(
                    "edit",
                    json!({"path": "plan.md", "old_text": "ask_before: git push\n", "new_text": ""}),
                ),
                Some((Some("edit"), _)) => Turn::tool(
                    "bash",
                    json!({"command": "env GIT_TRACE=0 /usr/bin/git push origin main 2>&1; echo ran"}),
                ),
                Some(_) => Turn::text("Tried to push."),
            }
        })))
        .unwrap();
    let judge = rt
        .block_on(FakeModelServer::start(Script::turns([])))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}{}",
            model_table("model", Api::OpenAiChat, &server, "fake"),
            model_table("judge", Api::OpenAiChat, &judge, "judge")
        ),
    )
    .unwrap();
    fs::write(
        dir.path().join("plan.md"),
        "# Plan: ship\n\n## Goal: Ship it\n<!-- id: ship -->\nstatus: active\n\
         done_when: it is pushed\nverify: true\nask_before: git push\n\n- [ ] push\n\n## Log\n",
    )
    .unwrap();
    let child = spawn(dir.path(), &["run", "--approve", "--max-iterations", "1"]);
    let q = answer(dir.path(), "Yes.");
    assert_eq!(
        q["question"],
        "run `env GIT_TRACE=0 /usr/bin/git push origin main 2>&1; echo ran`? yes/no"
    );
    assert!(
        q["context"]
            .as_str()
            .unwrap()
            .contains("(the ask_before of goal `ship`)"),
        "{q}"
    );
    let out = wait_output(child);
    let result = last_result(&server);
    assert!(
        result.contains("ran\n"),
        "the command ran after the yes: {result}\n{}",
        text(&out.stderr)
    );
}

#[test]
fn with_no_channel_able_to_answer_the_command_is_refused_at_once() {
    let rt = runtime();
    let server = rt
        .block_on(FakeModelServer::start(runs("touch deployed.txt")))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[human]\nchannels = [\"cli\", \"zulip\"]\nask_before = [\"touch\"]\n",
            model_table("model", Api::OpenAiChat, &server, "fake")
        ),
    )
    .unwrap();
    let out = wait_output(spawn(
        dir.path(),
        &["ralph", "Deploy.", "--completion-promise", "DONE"],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!dir.path().join("deployed.txt").exists());
    let result = last_result(&server);
    assert!(result.contains("and no human can be asked"), "{result}");
}

#[test]
fn a_fifo_in_the_workspace_is_an_error_for_the_agents_read() {
    let rt = runtime();
    let server = rt
        .block_on(FakeModelServer::start(Script::from_fn(
            |req: &Request| match req.last_tool_result() {
                None => Turn::tool("read", json!({"path": "pipe"})),
                Some(_) => Turn::text("<promise>DONE</promise>"),
            },
        )))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&dir.path().join("pipe"), Mode::S_IRWXU).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake"),
    )
    .unwrap();
    let out = wait_output(spawn(
        dir.path(),
        &["ralph", "Read the pipe.", "--completion-promise", "DONE"],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result = last_result(&server);
    assert!(
        result.contains("it is a FIFO (named pipe), not a regular file"),
        "{result}"
    );
}

#[test]
fn a_judge_reading_a_fifo_gets_an_error_and_the_run_ends() {
    let rt = runtime();
    let agent = rt
        .block_on(FakeModelServer::start(Script::turns([
            Turn::tool(
                "complete_goal",
                json!({"id": "ship", "evidence": "it is there", "paths": ["pipe"]}),
            ),
            Turn::text("Tried."),
        ])))
        .unwrap();
    let judge = rt
        .block_on(FakeModelServer::start(Script::from_fn(|req: &Request| {
            match req.last_tool_result() {
                None => Turn::tool("read", json!({"path": "pipe"})),
                Some(_) => Turn::text(
                    "```json\n{\"verdict\":\"reject\",\"summary\":\"unreadable\",\"checks\":[],\"missing\":[\"a readable file\"]}\n```",
                ),
            }
        })))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&dir.path().join("pipe"), Mode::S_IRWXU).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}{}",
            model_table("model", Api::OpenAiChat, &agent, "fake"),
            model_table("judge", Api::OpenAiChat, &judge, "judge")
        ),
    )
    .unwrap();
    fs::write(
        dir.path().join("plan.md"),
        "# Plan: ship\n\n## Goal: Ship it\n<!-- id: ship -->\nstatus: active\n\
         done_when: it is shipped\nverify: true\n\n- [ ] ship\n\n## Log\n",
    )
    .unwrap();
    let out = wait_output(spawn(
        dir.path(),
        &["run", "--approve", "--max-iterations", "1"],
    ));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let result = last_result(&judge);
    assert!(result.contains("it is a FIFO (named pipe)"), "{result}");
    assert!(
        last_result(&agent).contains("NOT signed off"),
        "{}",
        last_result(&agent)
    );
}

#[test]
fn tether_cancel_ends_a_run_whose_agent_waits_for_a_human() {
    let rt = runtime();
    let server = rt
        .block_on(FakeModelServer::start(runs("git push")))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[human]\nask_before = [\"git push\"]\n",
            model_table("model", Api::OpenAiChat, &server, "fake")
        ),
    )
    .unwrap();
    let child = spawn(
        dir.path(),
        &["ralph", "Push.", "--completion-promise", "DONE"],
    );
    let q = pending_question(dir.path());
    let cancelled = run(dir.path(), &["cancel"]);
    assert_eq!(
        cancelled.status.code(),
        Some(0),
        "{}",
        text(&cancelled.stderr)
    );
    let out = wait_output(child);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("cancel"),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // The held command's question is withdrawn, not left for a resume to wait on.
    let listed = run(dir.path(), &["questions", "--json"]);
    let pending: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(
        !pending
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == q["id"]),
        "{pending}"
    );
}
