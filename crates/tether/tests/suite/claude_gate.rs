//! `[human] ask_before` for Claude Code, with the real CLI against the fake model server: its
//! Bash command is held by the `PreToolUse` hook (`tether gate`) until a human answers with
//! `tether answer`; a yes runs it (even a command Claude Code would refuse unattended), a no
//! refuses it and the model reads why; `tether cancel` withdraws the question.

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};

use tether_testkit::wait_until;

use super::claude_cli::configure;
use crate::common::agents::{diagnose, processes_in, ralph, start, status};
use crate::common::{PATIENCE, pending_question, run, text, wait_output};

/// Runs a loop whose agent asks to run a `python3` command creating `ran`, answers its gate
/// question with `answer`, and returns whether the command ran and what the model read.
fn gated(answer: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("python3 -c \"open('{}', 'w')\"", marker.display());
    let asked = command.clone();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("Bash", json!({"command": asked, "description": "probe"})),
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
        }
    }));
    configure(dir.path(), &server, "[human]\nask_before = [\"python3\"]\n");
    let child = ralph(dir.path(), "Run the probe.");
    let q = pending_question(dir.path());
    assert_eq!(q["question"], format!("run `{command}`? yes/no"));
    assert_eq!(q["run_id"], status(dir.path())["id"]);
    assert!(!marker.exists(), "the command ran before the answer");
    let out = run(dir.path(), &["answer", q["id"].as_str().unwrap(), answer]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &done)
    );
    let last = server.requests().last().unwrap().raw_body.clone();
    (marker.exists(), last)
}

#[test]
fn an_ask_before_command_runs_after_a_humans_yes() {
    let (ran, last) = gated("yes");
    assert!(ran, "the command did not run after a yes: {last}");
    assert!(!last.contains("\"is_error\":true"), "{last}");
}

#[test]
fn an_ask_before_command_is_refused_after_a_no() {
    let (ran, last) = gated("no");
    assert!(!ran, "the command ran after a no");
    assert!(last.contains("\"is_error\":true"), "{last}");
    assert!(last.contains("needs a human's yes first"), "{last}");
}

#[test]
fn tether_cancel_withdraws_a_held_command_and_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::tool(
            "Bash",
            json!({"command": "git push origin main", "description": "push"}),
        )
    }));
    configure(
        dir.path(),
        &server,
        "[human]\nask_before = [\"git push\"]\n",
    );
    let child = ralph(dir.path(), "Push it.");
    let q = pending_question(dir.path());
    assert_eq!(q["question"], "run `git push origin main`? yes/no");
    let out = run(dir.path(), &["cancel"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(done.status.code(), Some(130), "{}", text(&done.stderr));
    wait_until("Claude Code and tether gate to be gone", PATIENCE, || {
        processes_in(dir.path()).is_empty().then_some(())
    })
    .unwrap();
    let questions = run(dir.path(), &["questions", "--json"]);
    let pending: serde_json::Value = serde_json::from_slice(&questions.stdout).unwrap();
    assert_eq!(
        pending,
        json!([]),
        "the held command's question is still pending"
    );
    assert_eq!(status(dir.path())["status"], "cancelled");
}
