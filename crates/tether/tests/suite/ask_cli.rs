//! Asking a human from the command line and from a running loop, answered from another shell.

use std::fs;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{cmd, model_table, pending_question, run, runtime, spawn, text, wait_output};

#[test]
fn ask_is_answered_from_another_shell() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(
        dir.path(),
        &[
            "ask",
            "Postgres or SQLite?",
            "--context",
            "small app",
            "--confidence",
            "30",
            "--json",
        ],
    );
    let q = pending_question(dir.path());
    let id = q["id"].as_str().unwrap();
    assert_eq!(
        (q["question"].as_str(), q["confidence"].as_u64()),
        (Some("Postgres or SQLite?"), Some(30))
    );
    let listed = text(&run(dir.path(), &["questions"]).stdout);
    assert!(listed.contains(&format!("tether answer {id}")), "{listed}");

    let out = run(dir.path(), &["answer", id, "SQLite", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked = wait_output(child);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        a,
        json!({"question_id": id, "text": "SQLite", "channel": "cli", "responder": "alice",
            "thread_id": id, "choice": null, "options_offered": 0})
    );
    assert!(text(&asked.stderr).contains(&format!("tether answer {id}")));

    let late = run(dir.path(), &["answer", id, "Postgres", "--as", "bob"]);
    assert_eq!(late.status.code(), Some(1));
    assert!(
        text(&late.stderr).contains("already answered on cli by alice"),
        "{}",
        text(&late.stderr)
    );
    let history = text(&run(dir.path(), &["history"]).stdout);
    assert!(history.contains("→ SQLite — alice via cli"), "{history}");
    assert_eq!(
        run(dir.path(), &["answer", "q-zzzzzz", "x"]).status.code(),
        Some(2)
    );
}

#[test]
fn ctrl_c_leaves_the_question_pending() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(dir.path(), &["ask", "Still there?"]);
    let q = pending_question(dir.path());
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let again = pending_question(dir.path());
    assert_eq!(again["id"], q["id"]);
    assert_eq!(again["status"], "pending");
}

#[test]
fn a_ralph_loop_waits_for_a_human_and_continues_with_the_answer() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "ask_human",
            json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
        ),
        Some((_, result)) => Turn::text(format!("Noted ({result}). <promise>DONE</promise>")),
    });
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake"),
    )
    .unwrap();
    let child = spawn(
        dir.path(),
        &[
            "ralph",
            "Pick the logo colour.",
            "--completion-promise",
            "DONE",
        ],
    );
    let q = pending_question(dir.path());
    let status: Value =
        serde_json::from_slice(&run(dir.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(status["status"], "waiting_for_input");
    assert_eq!(q["run_id"], status["id"]);
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
    assert_eq!(out.status.code(), Some(0));
    let done = wait_output(child);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let requests = server.requests();
    let last = requests.last().unwrap().raw_body.clone();
    assert!(last.contains("Human replied: Blue."), "{last}");
    assert!(last.contains("responder: carol (via cli)"), "{last}");
}

#[test]
fn killed_while_waiting_then_resumed_keeps_the_same_question_and_delivers_its_answer() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| {
        let prompt = req.last_user_text().unwrap_or_default().to_owned();
        if prompt.contains("Answer: Green.") {
            return Turn::text("Using green as the human said. <promise>DONE</promise>");
        }
        match req.last_tool_result() {
            None => Turn::tool(
                "ask_human",
                json!({"question": "Which colour?", "context": "", "confidence": 5}),
            ),
            Some(_) => Turn::text("no answer yet"),
        }
    });
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake"),
    )
    .unwrap();
    let mut child = cmd(
        dir.path(),
        &["ralph", "Pick a colour.", "--completion-promise", "DONE"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let q = pending_question(dir.path());
    child.kill().unwrap(); // SIGKILL while the agent waits
    child.wait().unwrap();
    let status: Value =
        serde_json::from_slice(&run(dir.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(
        (status["status"].as_str(), status["orphaned"].as_bool()),
        (Some("waiting_for_input"), Some(true))
    );
    // The human answers while nothing runs; the answer is kept for the resumed loop.
    let id = q["id"].as_str().unwrap();
    assert_eq!(
        run(dir.path(), &["answer", id, "Green."]).status.code(),
        Some(0)
    );
    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let history: Value =
        serde_json::from_slice(&run(dir.path(), &["history", "--json"]).stdout).unwrap();
    assert_eq!(
        history.as_array().unwrap().len(),
        1,
        "the question was not asked again"
    );
    assert_eq!(
        server.requests().len(),
        2,
        "one ask, then the resumed iteration's answer"
    );
}
