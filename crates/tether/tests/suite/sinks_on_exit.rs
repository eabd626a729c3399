//! Short-lived commands deliver what their notice sinks queued before they exit: after `tether
//! ask` (answered from another shell), `tether goal complete` (its `signed_off` notice) and
//! `tether mcp` (a question answered, then the client gone) a webhook has already received the
//! message — checked right after the process exits, without waiting. A question nobody waits
//! for any more (its `tether ask` interrupted) is told by the `tether answer` that answers it.
//! A webhook that never answers holds none of them beyond the grace.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::wait_until;

use crate::common::mcp::Server;
use crate::common::webhook::Webhook;
use crate::common::{PATIENCE, cmd, pending_question, run, text, wait_output};

/// A workspace whose only notice sink is `hook`, with `extra` appended to `tether.toml`.
fn workspace(hook: &Webhook, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!("{}{extra}", hook.toml()),
    )
    .unwrap();
    dir
}

/// Starts `tether ask "Ship it?"` in `dir`, configured by `setup`.
fn ask(dir: &Path, setup: impl FnOnce(&mut Command)) -> Child {
    let mut c = cmd(dir, &["ask", "Ship it?"]);
    setup(&mut c);
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Answers the first pending question of `dir` with `text` as `who`; returns its id.
fn answer(dir: &Path, text_: &str, who: &str) -> String {
    let q = pending_question(dir);
    let id = q["id"].as_str().unwrap().to_owned();
    let out = run(dir, &["answer", &id, text_, "--as", who]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    id
}

/// The `answered` body `hook` received, asserting it is the last of `question`, `answered`.
fn told(hook: &Webhook) -> Value {
    let bodies = hook.bodies();
    assert_eq!(hook.kinds(), ["question", "answered"], "{bodies:?}");
    bodies[1].clone()
}

#[test]
fn tether_ask_has_told_the_webhook_who_answered_when_it_exits() {
    let hook = Webhook::start();
    let dir = workspace(&hook, "");
    let asking = ask(dir.path(), |_| {});
    let id = answer(dir.path(), "yes", "alice");
    let asked = wait_output(asking);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    assert_eq!(text(&asked.stdout), "yes\n");
    // Already there: delivered before `tether ask` exited, not left in its queue.
    let body = told(&hook);
    assert_eq!(
        (body["question_id"].as_str(), body["text"].as_str()),
        (Some(id.as_str()), Some("Answered on cli by alice: yes"))
    );
}

#[test]
fn tether_answer_tells_the_webhook_when_nobody_waits_for_the_question() {
    let hook = Webhook::start();
    let dir = workspace(&hook, "");
    let asking = ask(dir.path(), |_| {});
    let q = pending_question(dir.path());
    let status = Command::new("kill")
        .args(["-INT", &asking.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let asked = wait_output(asking);
    assert_eq!(asked.status.code(), Some(130), "{}", text(&asked.stderr));
    let listed = text(&run(dir.path(), &["questions"]).stdout);
    assert!(
        listed.contains("nobody is waiting: tether ask was interrupted"),
        "{listed}"
    );
    assert_eq!(hook.kinds(), ["question"]);

    let id = answer(dir.path(), "later", "bob");
    assert_eq!(id, q["id"].as_str().unwrap());
    // Nobody else would tell it: `tether answer` did, before it exited.
    let body = told(&hook);
    assert_eq!(body["text"], "Answered on cli by bob: later");
}

#[test]
fn a_webhook_that_never_answers_holds_tether_ask_no_longer_than_the_grace() {
    let hook = Webhook::held();
    let dir = workspace(&hook, "");
    let mut asking = ask(dir.path(), |c| {
        c.env("TETHER_NOTICE_GRACE_MS", "500");
    });
    answer(dir.path(), "yes", "alice");
    // Far less than the webhook's own 30 s per attempt, with its retries.
    wait_until("tether ask to exit", Duration::from_secs(20), || {
        asking.try_wait().unwrap()
    })
    .unwrap_or_else(|e| {
        let _ = asking.kill();
        panic!("{e}")
    });
    let asked: Output = asking.wait_with_output().unwrap();
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    assert_eq!(text(&asked.stdout), "yes\n");
    assert!(
        text(&asked.stderr).contains("gave up delivering"),
        "the undelivered message is named: {}",
        text(&asked.stderr)
    );
    // The question is still in flight; the answer behind it was dropped.
    assert_eq!(hook.kinds(), ["question"]);
}

#[test]
fn tether_goal_complete_has_sent_its_notice_when_it_exits() {
    const PLAN: &str = "# Plan: demo\n\n## Goal: Add numbers\n<!-- id: add -->\nstatus: active\n\
                        done_when: it adds\nverify: true\n\n## Log\n- 2026-01-01 00:00 started\n";
    let hook = Webhook::start();
    let dir = workspace(&hook, "[notify]\non = [\"signed_off\"]\n");
    let root = dir.path();
    fs::write(root.join("plan.md"), PLAN).unwrap();
    let hash = tether_plan::PlanDoc::parse("plan.md", PLAN)
        .plan()
        .goal("add")
        .unwrap()
        .contract_hash();
    fs::create_dir(root.join(".tether")).unwrap();
    tether_store::Store::open(root.join(".tether/tether.db"))
        .unwrap()
        .approve_contract("plan.md", "add", &hash, "alice")
        .unwrap();
    let out = run(root, &["goal", "complete", "add", "--no-judge"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Already there when the command has exited.
    let bodies = hook.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(
        (
            bodies[0]["kind"].as_str(),
            bodies[0]["notice"].as_str(),
            bodies[0]["run_id"].as_str(),
            bodies[0]["text"].as_str()
        ),
        (
            Some("notice"),
            Some("signed_off"),
            None,
            Some("Goal add was signed off by tester.")
        )
    );
}

#[test]
fn tether_mcp_has_told_the_webhook_who_answered_when_its_session_ends() {
    // The question's POST is kept in flight until the session, its client gone, waits for its
    // sinks (or has ended without), so the answer queued behind it arrives only if it waits.
    let hook = Webhook::held();
    let dir = workspace(&hook, "");
    let mut server = Server::start(dir.path(), &[], |c| {
        c.env("TETHER_LOG", "tether_human=debug,warn");
    });
    server.initialize();
    let call = server.call_tool(
        "ask_human",
        json!({"question": "Ship it?", "context": "tests", "confidence": 10}),
        None,
    );
    let id = answer(dir.path(), "yes", "alice");
    let response = server.response(call);
    assert_eq!(response["result"]["isError"], false, "{response}");
    server.close_input();
    wait_until(
        "the session to wait for its sinks, or end",
        PATIENCE,
        || {
            let waits = server.stderr().contains("waiting for the notice sinks");
            (waits || server.exited()).then_some(())
        },
    )
    .unwrap();
    hook.release();
    assert_eq!(server.wait_exit(), Some(0), "{}", server.stderr());
    let body = told(&hook);
    assert_eq!(
        (body["question_id"].as_str(), body["text"].as_str()),
        (Some(id.as_str()), Some("Answered on cli by alice: yes"))
    );
}
