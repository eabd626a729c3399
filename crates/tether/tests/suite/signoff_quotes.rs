//! The quote check from the real binary: a goal whose fix is one short line (`22` in `.nvmrc`)
//! is signed off by a judge quoting that changed line, where a rule counting letters would have
//! refused it and looped; a goal met before the run began is signed off by a judge quoting the
//! short unchanged line that proves it (`echo $(($1 + $2))`); and a judge accepting on
//! `import os` or on a stub's `raise NotImplementedError` of a file the run did not touch is
//! refused. The agent and the judge are scripted on their own fake model servers, in a git
//! repository with a commit before the run.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_store::{Store, Verdict};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{model_table, run, runtime, text};

const PLAN: &str = "# Plan: node

## Goal: Node 22
<!-- id: node -->
status: active
done_when: the project pins Node 22 in .nvmrc
verify: test \"$(cat .nvmrc)\" = 22
failure_modes:
- another file pins an older Node

## Log
";

struct Env {
    dir: tempfile::TempDir,
    judge: FakeModelServer,
    _agent: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository whose one commit holds the plan and `files`; the agent plays `agent` and the
/// judge `judge`.
fn repo(plan: &str, files: &[(&str, &str)], agent: Vec<Turn>, judge: Vec<Turn>) -> Env {
    let rt = runtime();
    let agent = rt
        .block_on(FakeModelServer::start(Script::turns(agent)))
        .unwrap();
    let judge = rt
        .block_on(FakeModelServer::start(Script::turns(judge)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(
        root.join("tether.toml"),
        format!(
            "{}\n{}",
            model_table("model", Api::OpenAiChat, &agent, "worker-model"),
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    fs::write(root.join("plan.md"), plan).unwrap();
    for (path, text) in files {
        fs::write(root.join(path), text).unwrap();
    }
    fs::write(root.join(".gitignore"), ".tether/\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "before the run"]);
    Env {
        dir,
        judge,
        _agent: agent,
        _rt: rt,
    }
}

/// A repository whose last commit pins Node 18 and holds a `main.py` the run never touches; the
/// agent changes `.nvmrc` to 22 and asks for the sign-off; the judge plays `judge`.
fn env(judge: Vec<Turn>) -> Env {
    let agent = vec![
        Turn::tool(
            "edit",
            json!({"path": ".nvmrc", "old_text": "18", "new_text": "22"}),
        ),
        Turn::tool(
            "complete_goal",
            json!({"id": "node", "evidence": ".nvmrc says 22", "paths": [".nvmrc"]}),
        ),
        Turn::text("Pinned Node 22."),
    ];
    let files = [
        (".nvmrc", "18\n"),
        ("main.py", "import os\n\nprint(os.getcwd())\n"),
    ];
    repo(PLAN, &files, agent, judge)
}

const ADD_PLAN: &str = "# Plan: calc

## Goal: Add in calc.sh
<!-- id: add -->
status: active
done_when: sh calc.sh A B prints the sum of A and B
verify: test \"$(sh calc.sh 2 3)\" = 5 && test \"$(sh calc.sh 10 -4)\" = 6
failure_modes:
- calc.sh still subtracts

## Log
";

/// A goal met before the run began (a person's fix, or an earlier run whose sign-off failed):
/// the last commit already holds the fix of `calc.sh`, and a stub the run never touches; the
/// agent changes nothing and asks for the sign-off; the judge plays `judge`.
fn met_before(judge: Vec<Turn>) -> Env {
    let agent = vec![
        Turn::tool(
            "complete_goal",
            json!({"id": "add", "evidence": "calc.sh already adds", "paths": ["calc.sh"]}),
        ),
        Turn::text("It was done before this run."),
    ];
    let files = [
        ("calc.sh", "#!/bin/sh\necho $(($1 + $2))\n"),
        (
            "stub.py",
            "def parse(text):\n    raise NotImplementedError\n",
        ),
    ];
    repo(ADD_PLAN, &files, agent, judge)
}

fn verdict(path: &str, quote: &str) -> Turn {
    let v: Value = json!({
        "verdict": "accept",
        "summary": "the goal is met",
        "checks": [{"path": path, "quote": quote, "observation": "meets the goal"}],
        "missing": [],
    });
    Turn::text(format!("I read it.\n```json\n{v}\n```"))
}

fn verdicts(root: &Path, goal: &str) -> Vec<tether_store::VerdictRecord> {
    Store::open(root.join(".tether/tether.db"))
        .unwrap()
        .verdicts_for_goal("plan.md", goal)
        .unwrap()
}

#[test]
fn a_one_line_fix_is_signed_off_on_the_changed_line_it_quotes() {
    let e = env(vec![
        Turn::tool("read", json!({"path": ".nvmrc"})),
        verdict(".nvmrc", "22"),
    ]);
    let out = run(e.dir.path(), &["run", "--approve", "--max-iterations", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("signed off: node"),
        "{}",
        text(&out.stdout)
    );
    let [record] = verdicts(e.dir.path(), "node").try_into().unwrap();
    assert_eq!(record.decision.verdict, Verdict::Accept);
    assert_eq!(record.decision.checks[0]["line"], 1);
    // The judge was told which line changed.
    assert_eq!(e.judge.request_count(), 2);
    let transcript = fs::read_to_string(
        e.dir
            .path()
            .join(record.decision.transcript_path.as_deref().unwrap()),
    )
    .unwrap();
    assert!(
        transcript.contains("## Lines changed since the run began\\nCite these first; a changed line counts however short.\\n- .nvmrc: line 1"),
        "{transcript}"
    );
}

#[test]
fn an_accept_on_an_import_the_run_never_touched_is_refused() {
    let e = env(vec![verdict("main.py", "import os")]);
    let out = run(e.dir.path(), &["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let [record] = verdicts(e.dir.path(), "node").try_into().unwrap();
    assert_eq!(record.decision.verdict, Verdict::Reject);
    let reason = record.decision.reason.as_str();
    assert!(
        reason.contains(
            "the quote \"import os\" of `main.py` does not count: line 1 was not changed by this \
             run, and it is an import line"
        ) && reason.contains("quote the lines this run changed (.nvmrc line 1)"),
        "{reason}"
    );
    let plan = fs::read_to_string(e.dir.path().join("plan.md")).unwrap();
    assert!(plan.contains("status: active"), "{plan}");
}

#[test]
fn a_goal_met_before_the_run_is_signed_off_on_the_short_unchanged_line_that_proves_it() {
    let e = met_before(vec![verdict("calc.sh", "echo $(($1 + $2))")]);
    let out = run(e.dir.path(), &["run", "--approve", "--max-iterations", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    let [record] = verdicts(e.dir.path(), "add").try_into().unwrap();
    assert_eq!(record.decision.verdict, Verdict::Accept);
    assert_eq!(record.decision.checks[0]["line"], 2);
}

#[test]
fn an_accept_on_a_stub_line_the_run_never_touched_is_refused_however_long_it_is() {
    let e = met_before(vec![verdict("stub.py", "raise NotImplementedError")]);
    let out = run(e.dir.path(), &["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let [record] = verdicts(e.dir.path(), "add").try_into().unwrap();
    assert_eq!(record.decision.verdict, Verdict::Reject);
    let reason = record.decision.reason.as_str();
    assert!(
        reason.contains(
            "the quote \"raise NotImplementedError\" of `stub.py` does not count: line 2 was not \
             changed by this run, and it names one thing and states nothing about it"
        ),
        "{reason}"
    );
    let plan = fs::read_to_string(e.dir.path().join("plan.md")).unwrap();
    assert!(plan.contains("status: active"), "{plan}");
}
