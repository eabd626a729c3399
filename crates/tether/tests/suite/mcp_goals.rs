//! `complete_goal` and `cancel_goal` served by `tether mcp` to an MCP client over stdio, with
//! the judge played by the fake model server: an accept that patches the plan, a verify failure
//! that never reaches the judge, a refusal for an unapproved contract, and a cancel.

use std::fs;
use std::path::Path;

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::mcp::{Server, text};
use crate::common::{model_table, runtime};

const PLAN: &str = "# Plan: numbers

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum
verify: grep -q 'a + b' src/lib.rs
failure_modes:
- the grep matches a comment
- add is never called

## Goal: Later
<!-- id: later -->
status: open
done_when: someday

## Log
";

fn workspace(dir: &Path, judge: &FakeModelServer, approve: bool) {
    fs::write(
        dir.join("tether.toml"),
        model_table("judge", Api::OpenAiChat, judge, "judge-model"),
    )
    .unwrap();
    fs::write(dir.join("plan.md"), PLAN).unwrap();
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(
        dir.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    )
    .unwrap();
    if approve {
        let doc = tether_plan::PlanDoc::parse("plan.md", PLAN);
        let hash = doc.plan().goal("add").unwrap().contract_hash();
        fs::create_dir_all(dir.join(".tether")).unwrap();
        tether_store::Store::open(dir.join(".tether/tether.db"))
            .unwrap()
            .approve_contract("plan.md", "add", &hash, "alice")
            .unwrap();
    }
}

fn judge(rt: &tokio::runtime::Runtime, turns: Vec<Turn>) -> FakeModelServer {
    rt.block_on(FakeModelServer::start(Script::turns(turns)))
        .unwrap()
}

fn complete() -> serde_json::Value {
    json!({"id": "add", "evidence": "grep finds a + b", "paths": ["src/lib.rs"]})
}

#[test]
fn the_goal_tools_are_listed_and_an_accept_signs_the_goal_off() {
    let rt = runtime();
    let verdict = json!({"verdict": "accept", "summary": "add adds",
        "checks": [{"path": "src/lib.rs", "quote": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b", "observation": "sums"}], "missing": []});
    let judge = judge(&rt, vec![Turn::text(format!("```json\n{verdict}\n```"))]);
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &judge, true);
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let tools = server.call("tools/list", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"complete_goal") && names.contains(&"cancel_goal"),
        "{names:?}"
    );

    let id = server.call_tool("complete_goal", complete(), None);
    let result = server.response(id);
    assert_eq!(result["result"]["isError"], false, "{result}");
    assert!(text(&result["result"]).contains("accepted"), "{result}");
    let plan = fs::read_to_string(dir.path().join("plan.md")).unwrap();
    assert!(plan.contains("status: done"), "{plan}");
    assert_eq!(judge.request_count(), 1);
}

#[test]
fn a_failing_verify_is_a_reject_without_a_judge_call_and_an_unapproved_goal_is_refused() {
    let rt = runtime();
    let judge = judge(&rt, vec![]);
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &judge, false);
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let id = server.call_tool("complete_goal", complete(), None);
    let refused = server.response(id);
    assert!(
        text(&refused["result"]).contains("tether plan approve add"),
        "{refused}"
    );

    let doc = tether_plan::PlanDoc::parse("plan.md", PLAN);
    let hash = doc.plan().goal("add").unwrap().contract_hash();
    tether_store::Store::open(dir.path().join(".tether/tether.db"))
        .unwrap()
        .approve_contract("plan.md", "add", &hash, "alice")
        .unwrap();
    fs::write(
        dir.path().join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 { a - b }\n",
    )
    .unwrap();
    let id = server.call_tool("complete_goal", complete(), None);
    let rejected = server.response(id);
    assert!(
        text(&rejected["result"]).contains("verify failed"),
        "{rejected}"
    );
    assert_eq!(judge.request_count(), 0);
}

#[test]
fn cancel_goal_cancels_with_a_logged_reason() {
    let rt = runtime();
    let judge = judge(&rt, vec![]);
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &judge, false);
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let id = server.call_tool(
        "cancel_goal",
        json!({"id": "later", "reason": "replaced by add"}),
        None,
    );
    let result = server.response(id);
    assert_eq!(result["result"]["isError"], false, "{result}");
    let plan = fs::read_to_string(dir.path().join("plan.md")).unwrap();
    assert!(plan.contains("status: cancelled"), "{plan}");
    assert!(
        plan.contains("later cancelled by the agent (a person must confirm): replaced by add"),
        "{plan}"
    );
}

/// The verify `complete_goal` runs is code the agent wrote: served by `tether mcp` (an agent
/// CLI's, or any client's) it runs in the sandbox as `tether goal complete`'s does — it cannot
/// write `.git` — and its result still comes back.
#[test]
fn complete_goal_runs_verify_in_the_sandbox() {
    let rt = runtime();
    let judge = judge(&rt, vec![]);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let plan = PLAN.replace("verify: grep -q 'a + b' src/lib.rs", "verify: sh check.sh");
    workspace(root, &judge, false);
    fs::write(root.join("plan.md"), &plan).unwrap();
    fs::write(
        root.join("check.sh"),
        "echo x > .git/pwned-by-verify 2>/dev/null && echo 'wrote .git'\nexit 1\n",
    )
    .unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(git.status.success());
    let doc = tether_plan::PlanDoc::parse("plan.md", &plan);
    let hash = doc.plan().goal("add").unwrap().contract_hash();
    tether_store::Store::open(root.join(".tether/tether.db"))
        .unwrap()
        .approve_contract("plan.md", "add", &hash, "alice")
        .unwrap();
    let mut server = Server::start(root, &[], |_| {});
    server.initialize();
    let id = server.call_tool("complete_goal", complete(), None);
    let rejected = server.response(id);
    assert!(
        text(&rejected["result"]).contains("verify failed"),
        "{rejected}"
    );
    assert!(
        !root.join(".git/pwned-by-verify").exists(),
        "verify wrote .git: {rejected}"
    );
    assert_eq!(judge.request_count(), 0);
}
