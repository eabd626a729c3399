//! `tether goal complete` and `tether goal cancel` as processes, with the judge played by the
//! fake model server over real HTTP: output (snapshot), exit codes, the plan and the store.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{Out, model_table, runtime, tether};

const PLAN: &str = "# Plan: demo

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum
verify: sh check.sh
failure_modes:
- the check greps for the wrong thing

## Goal: Later
<!-- id: later -->
status: open
done_when: someday

## Log
- 2026-01-01 00:00 started
";

struct Env {
    dir: tempfile::TempDir,
    server: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

/// A workspace whose `[judge]` is the fake server playing `script`, goal `add` approved.
fn env(script: Script, judge: bool) -> Env {
    let rt = runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let config = if judge {
        model_table("judge", Api::OpenAiChat, &server, "judge-model")
    } else {
        String::new()
    };
    fs::write(root.join("tether.toml"), config).unwrap();
    fs::write(root.join("plan.md"), PLAN).unwrap();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(
        root.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    )
    .unwrap();
    fs::write(
        root.join("check.sh"),
        "grep -q 'a + b' src/lib.rs && echo 'check ok'\n",
    )
    .unwrap();
    let doc = tether_plan::PlanDoc::parse("plan.md", PLAN);
    let hash = doc.plan().goal("add").unwrap().contract_hash();
    fs::create_dir(root.join(".tether")).unwrap();
    tether_store::Store::open(root.join(".tether/tether.db"))
        .unwrap()
        .approve_contract("plan.md", "add", &hash, "alice")
        .unwrap();
    Env {
        dir,
        server,
        _rt: rt,
    }
}

impl Env {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) -> Out {
        tether(self.path(), args).durations()
    }

    fn plan(&self) -> String {
        fs::read_to_string(self.path().join("plan.md")).unwrap()
    }
}

fn verdict(verdict: &str, quote: &str, missing: &[&str]) -> Turn {
    let body = json!({"verdict": verdict, "summary": format!("the judge says {verdict}"),
        "checks": [{"path": "src/lib.rs", "quote": quote, "observation": "the sum"}],
        "missing": missing});
    Turn::text(format!("Done reading.\n```json\n{body}\n```"))
}

#[test]
fn an_accept_signs_the_goal_off_and_exits_0() {
    let e = env(
        Script::turns([
            Turn::tool("read", json!({"path": "src/lib.rs"})),
            verdict(
                "accept",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b",
                &[],
            ),
        ]),
        true,
    );
    let out = e.run(&[
        "goal",
        "complete",
        "add",
        "--evidence",
        "check.sh passes",
        "--path",
        "src/lib.rs",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "checking goal add: verify, then judge judge-model…\n"
    );
    insta::assert_snapshot!("goal_complete_accepted", out.stdout);
    assert!(e.plan().contains("status: done"));
    assert!(
        e.plan()
            .contains(" add signed off: the judge says accept\n")
    );
    assert_eq!(e.server.request_count(), 2);
    assert!(e.path().join(".tether/signoff/judge-add-1.jsonl").is_file());
    // The judge was given the evidence and the paths.
    let first = &e.server.requests()[0].body;
    let prompt = first["messages"].to_string();
    assert!(
        prompt.contains("check.sh passes") && prompt.contains("- src/lib.rs"),
        "{prompt}"
    );

    let again = e.run(&["goal", "complete", "add"]);
    assert_eq!(again.code, 2);
    assert_eq!(
        again.stderr.lines().last().unwrap(),
        "error: goal `add` is already done"
    );
}

#[test]
fn a_reject_prints_what_is_missing_and_exits_1() {
    let e = env(
        Script::turns([verdict(
            "reject",
            "a + b",
            &["a test of add", "overflow handling"],
        )]),
        true,
    );
    let out = e.run(&["goal", "complete", "add"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    insta::assert_snapshot!("goal_complete_rejected", out.stdout);
    assert!(e.plan().contains("status: active"));
    assert!(
        e.plan()
            .contains("missing: a test of add; overflow handling")
    );
}

#[test]
fn a_failing_verify_exits_1_without_calling_the_judge() {
    let e = env(Script::turns([]), true);
    fs::write(
        e.path().join("check.sh"),
        "echo 'expected 4, got 0' >&2; exit 1\n",
    )
    .unwrap();
    let out = e.run(&["goal", "complete", "add"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    insta::assert_snapshot!("goal_complete_verify_failed", out.stdout);
    assert_eq!(e.server.request_count(), 0);
}

#[test]
fn an_invented_quote_or_a_garbage_answer_is_never_an_accept() {
    let e = env(
        Script::turns([verdict("accept", "a * b * c", &[]), Turn::text("LGTM")]),
        true,
    );
    let out = e.run(&["goal", "complete", "add", "--json"]);
    assert_eq!(out.code, 1);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "rejected");
    assert_eq!(v["judge_unavailable"], false);
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("the quote \"a * b * c\" is not a run of whole lines of `src/lib.rs`")
    );

    // The work changed since (a rejected tree is not judged again as it is).
    fs::write(e.path().join("NOTES.md"), "tried again\n").unwrap();
    let out = e.run(&["goal", "complete", "add", "--json"]);
    assert_eq!(out.code, 1);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (v["judge_unavailable"].as_bool(), v["attempt"].as_u64()),
        (Some(true), Some(2))
    );
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .starts_with("judge unavailable: no parsable verdict")
    );
    assert!(e.plan().contains("status: active"));
}

#[test]
fn refusals_and_missing_configuration_exit_2() {
    let e = env(Script::turns([]), true);
    let unapproved = e.run(&["goal", "complete", "later"]);
    assert_eq!(unapproved.code, 2);
    assert_eq!(
        unapproved.stderr.lines().last().unwrap(),
        "error: the contract of goal `later` has not been approved by a human; approve it with \
         `tether plan approve later`"
    );
    fs::write(
        e.path().join("plan.md"),
        PLAN.replace("verify: sh check.sh", "verify: true"),
    )
    .unwrap();
    let changed = e.run(&["goal", "complete", "add", "--json"]);
    assert_eq!(changed.code, 2);
    let v: Value = serde_json::from_str(&changed.stdout).unwrap();
    assert_eq!(v["outcome"], "refused");
    assert!(changed.stderr.contains("changed since alice approved it"));
    assert_eq!(e.server.request_count(), 0);

    let no_judge = env(Script::turns([]), false);
    let out = no_judge.run(&["goal", "complete", "add"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!("goal_complete_without_a_judge", out.stderr);
}

#[test]
fn no_judge_signs_off_on_verify_alone() {
    let e = env(Script::turns([]), false);
    let out = e.run(&["goal", "complete", "add", "--no-judge"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("goal_complete_no_judge", out.stdout);
    assert!(e.plan().contains("status: done"));
}

#[test]
fn cancel_logs_the_reason_and_refuses_a_closed_goal() {
    let e = env(Script::turns([]), false);
    let out = e.run(&[
        "goal",
        "cancel",
        "later",
        "--reason",
        "not needed after all",
    ]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "cancelled: goal later: not needed after all\n")
    );
    assert!(e.plan().contains("<!-- id: later -->\nstatus: cancelled\n"));
    assert!(
        e.plan()
            .contains(" later cancelled by tester: not needed after all\n")
    );
    let again = e.run(&["goal", "cancel", "later", "--reason", "again"]);
    assert_eq!(again.code, 2);
    assert!(
        again.stderr.contains("goal `later` is cancelled"),
        "{}",
        again.stderr
    );
    let usage = e.run(&["goal", "cancel", "add"]);
    assert_eq!(usage.code, 2, "--reason is required");
}

#[test]
fn control_characters_in_verify_output_and_the_verdict_are_printed_escaped() {
    let e = env(
        Script::turns([verdict(
            "reject",
            "a + b",
            &["a test\x1b[8m (hidden)\x1b[0m", "ok\rall good"],
        )]),
        true,
    );
    let out = e.run(&["goal", "complete", "add"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stdout.contains(['\x1b', '\r']), "{:?}", out.stdout);
    insta::assert_snapshot!("goal_complete_rejected_escaped", out.stdout);

    fs::write(
        e.path().join("check.sh"),
        "printf 'FAIL\\033[2J\\033[H\\rall tests passed\\n'; exit 1\n",
    )
    .unwrap();
    let out = e.run(&["goal", "complete", "add"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stdout.contains(['\x1b', '\r']), "{:?}", out.stdout);
    insta::assert_snapshot!("goal_complete_verify_failed_escaped", out.stdout);
    // The JSON form keeps the exact text (after a change: an unchanged tree is not checked
    // again).
    fs::write(e.path().join("NOTES.md"), "tried again\n").unwrap();
    let json = e.run(&["goal", "complete", "add", "--json"]);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(
        v["verify"]["tail"]
            .as_str()
            .unwrap()
            .contains("FAIL\x1b[2J\x1b[H\rall tests passed"),
        "{v}"
    );
}

#[test]
fn a_rejected_goal_on_an_unchanged_tree_is_refused_without_verify_or_a_judge() {
    let e = env(
        Script::turns([
            verdict("reject", "a + b", &["a test of add"]),
            verdict("reject", "a + b", &["still a test of add"]),
        ]),
        true,
    );
    let first = e.run(&["goal", "complete", "add"]);
    assert_eq!(first.code, 1, "{}", first.stderr);
    let asked = e.server.requests().len();
    let again = e.run(&["goal", "complete", "add"]);
    assert_eq!(again.code, 2, "{}", again.stdout);
    assert!(
        again
            .stderr
            .contains("nothing changed since attempt 1, which was rejected"),
        "{}",
        again.stderr
    );
    assert_eq!(
        e.server.requests().len(),
        asked,
        "the judge was asked again"
    );
    assert!(!e.path().join(".tether/signoff/verify-add-2.log").exists());
    // A change to the work is checked in full.
    fs::write(e.path().join("src/test.rs"), "// a test\n").unwrap();
    let third = e.run(&["goal", "complete", "add"]);
    assert_eq!(third.code, 1, "{}", third.stderr);
    assert!(e.server.requests().len() > asked);
    assert!(
        third.stdout.contains("still a test of add"),
        "{}",
        third.stdout
    );
}
