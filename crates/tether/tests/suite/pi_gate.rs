//! `[human] ask_before` for pi, with the real pi against the fake model server: its `bash`
//! command is held by tether's extension (`tether gate` in pi's `tool_call` handler) until a
//! human answers with `tether answer`; a yes runs it, a no refuses it and the model reads why;
//! a command no prefix holds runs without a question.

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};

use super::pi_cli::configure;
use crate::common::agents::{diagnose, ralph, start, status};
use crate::common::{pending_question, run, text, wait_output};

/// A loop whose agent runs `python3` creating `ran` through pi's `bash`, with `python3` held;
/// `answer` answers the gate's question (`None`: the command is not held, nobody is asked).
/// Returns whether the command ran and what the model read last.
fn gated(answer: Option<&str>) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("python3 -c \"open('{}', 'w')\"", marker.display());
    let asked = command.clone();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("bash", json!({"command": asked})),
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
        }
    }));
    let held = if answer.is_some() {
        "python3"
    } else {
        "git push"
    };
    configure(
        dir.path(),
        &server,
        &format!("[human]\nask_before = [\"{held}\"]\n"),
    );
    let child = ralph(dir.path(), "Run the probe.");
    if let Some(answer) = answer {
        let q = pending_question(dir.path());
        assert_eq!(q["question"], format!("run `{command}`? yes/no"));
        assert_eq!(q["run_id"], status(dir.path())["id"]);
        assert!(!marker.exists(), "the command ran before the answer");
        let out = run(dir.path(), &["answer", q["id"].as_str().unwrap(), answer]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
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
    let (ran, last) = gated(Some("yes"));
    assert!(ran, "the command did not run after a yes: {last}");
}

#[test]
fn an_ask_before_command_is_refused_after_a_no() {
    let (ran, last) = gated(Some("no"));
    assert!(!ran, "the command ran after a no");
    assert!(last.contains("needs a human's yes first"), "{last}");
}

#[test]
fn a_command_no_prefix_holds_runs_without_a_question() {
    let (ran, last) = gated(None);
    assert!(ran, "the command did not run: {last}");
}
