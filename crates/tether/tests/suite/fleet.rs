//! `tether run --parallel N`: many goals of the plan at once, each in a worktree of its own on a
//! branch cut from the run's `tether/<run-id>`, merged back as each signs off, a goal starting
//! only once the goals in its `after:` are merged; the checkout is never written.

use std::path::Path;
use std::process::Stdio;

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{cmd, model_table, runtime, sh, text, wait_output};

/// A diamond (`base` → `left`, `right` → `top`) and a goal of its own (`alone`). Each goal's
/// work is a file `<id>.txt`; `top`'s verify also needs `left.txt` and `right.txt`, which its
/// branch holds only if it was cut after both were merged.
const DIAMOND: &str = "# Plan: shapes

## Goal: Base
<!-- id: base -->
status: active
done_when: the file TARGET-base exists as base.txt
verify: test -f base.txt

## Goal: Left
<!-- id: left -->
status: active
after: base
done_when: the file TARGET-left exists as left.txt
verify: test -f base.txt && test -f left.txt

## Goal: Right
<!-- id: right -->
status: active
after: base
done_when: the file TARGET-right exists as right.txt
verify: test -f base.txt && test -f right.txt

## Goal: Top
<!-- id: top -->
status: active
after: left, right
done_when: the file TARGET-top exists as top.txt
verify: test -f left.txt && test -f right.txt && test -f top.txt

## Goal: Alone
<!-- id: alone -->
status: active
done_when: the file TARGET-alone exists as alone.txt
verify: test -f alone.txt

## Log
";

/// The goal a request is about: the `TARGET-<id>` its prompt names.
fn goal_of(req: &Request) -> String {
    let text = serde_json::to_string(&req.messages).unwrap() + req.system.as_deref().unwrap_or("");
    let at = text.find("TARGET-").expect("a goal's prompt") + "TARGET-".len();
    text[at..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// Each goal's agent: writes `<id>.txt`, signs the goal off, says it is done.
fn agent() -> Script {
    Script::from_fn(|req: &Request| {
        let goal = goal_of(req);
        match req.last_tool_result() {
            None => Turn::tool(
                "write",
                json!({"path": format!("{goal}.txt"), "content": format!("done {goal}\n")}),
            ),
            Some((Some("write"), _)) => Turn::tool(
                "complete_goal",
                json!({"id": goal, "evidence": format!("{goal}.txt says done {goal}"),
                       "paths": [format!("{goal}.txt")]}),
            ),
            Some(_) => Turn::text(format!("{goal} is done.")),
        }
    })
}

/// A judge that reads the goal's file and accepts, quoting it.
fn judge() -> Script {
    Script::from_fn(|req: &Request| {
        let goal = goal_of(req);
        let file = format!("{goal}.txt");
        match req.last_tool_result() {
            None => Turn::tool("read", json!({"path": file})),
            Some(_) => {
                let v = json!({
                    "verdict": "accept",
                    "summary": format!("{file} holds the work"),
                    "checks": [{"path": file, "quote": format!("done {goal}"),
                                "observation": "the file is there"}],
                    "missing": [],
                });
                Turn::text(format!("```json\n{v}\n```"))
            }
        }
    })
}

fn repository(dir: &Path) {
    sh(
        dir,
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && printf '.tether/\\n' > .gitignore && git add -A && git commit -q -m start",
    );
}

#[test]
fn a_diamond_of_goals_runs_two_at_once_and_merges_into_the_runs_branch() {
    let rt = runtime();
    let agent = rt.block_on(FakeModelServer::start(agent())).unwrap();
    let judge = rt.block_on(FakeModelServer::start(judge())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("tether.toml"),
        format!(
            "{}\n{}",
            model_table("model", Api::OpenAiChat, &agent, "worker-model"),
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    std::fs::write(root.join("plan.md"), DIAMOND).unwrap();
    repository(root);
    let state = tempfile::tempdir().unwrap();
    let child = cmd(root, &["run", "--parallel", "2", "--approve"])
        .env("XDG_STATE_HOME", state.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("all goals merged into tether/r-"),
        "{stdout}"
    );
    let branch = stdout["all goals merged into ".len()..]
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    // Every goal's work is on the run's branch, each merged as one merge commit.
    for goal in ["base", "left", "right", "top", "alone"] {
        assert_eq!(
            sh(root, &format!("git show {branch}:{goal}.txt")),
            format!("done {goal}\n")
        );
        assert!(
            stderr.contains(&format!("merged goal {goal} into {branch}")),
            "{stderr}"
        );
    }
    let merges = sh(
        root,
        &format!("git rev-list --merges --count main..{branch}"),
    );
    assert_eq!(merges.trim(), "5");
    // The checkout and its branch are as they were.
    assert_eq!(sh(root, "git status --porcelain"), "");
    assert_eq!(sh(root, "git rev-list --count main").trim(), "1");
    assert!(!root.join("base.txt").exists());
}
