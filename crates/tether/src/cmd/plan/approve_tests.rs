//! `ensure_approved` against a real workspace and store, with the terminal replaced by memory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;

use tether_config::MapEnv;
use tether_config::Workspace;

use super::ensure_approved_with;
use crate::cmd::Ctx;
use crate::failure::Failure;

const PLAN: &str = "# Plan: p\n\n## Goal: Cache layer\nstatus: active\ndone_when: p95 < 50ms\n\
verify: cargo test\nfailure_modes:\n- bypassed\n- trivial test\n\n\
## Goal: Later\n<!-- id: later -->\nstatus: open\ndone_when: later\n\n\
## Goal: Shipped\n<!-- id: shipped -->\nstatus: done\ndone_when: shipped\n";

struct Run {
    result: anyhow::Result<()>,
    err: String,
    stdout: Vec<u8>,
}

fn ensure(dir: &std::path::Path, approve: bool, answer: Option<&str>) -> Run {
    let env = MapEnv::new().with("USER", "alice");
    let mut stdout = Vec::new();
    let mut err = Vec::new();
    let result = {
        let mut ctx = Ctx {
            ws: Workspace::at(dir),
            env: &env,
            out: &mut stdout,
            bridged: false,
            input: None,
            run_config: None,
            run_sandbox: None,
            run: None,
        };
        match answer {
            Some(a) => {
                let mut input = a.as_bytes();
                ensure_approved_with(&mut ctx, approve, Some(&mut input), &mut err)
            }
            None => ensure_approved_with(&mut ctx, approve, None, &mut err),
        }
    };
    Run {
        result,
        err: String::from_utf8(err).unwrap(),
        stdout,
    }
}

fn approvals(dir: &std::path::Path) -> Vec<(String, String)> {
    let store = tether_store::Store::open(dir.join(".tether/tether.db")).unwrap();
    ["cache-layer", "later", "shipped"]
        .iter()
        .filter_map(|id| store.approval("plan.md", id).unwrap())
        .map(|a| (a.goal_id, a.approved_by))
        .collect()
}

#[test]
fn without_a_terminal_it_refuses_naming_the_goals_and_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    let run = ensure(dir.path(), false, None);
    let e = run.result.unwrap_err();
    assert!(
        e.chain().any(|c| c.is::<Failure>()),
        "a usage error: exit 2"
    );
    insta::assert_snapshot!(format!("{e:#}"), @"the contracts of 2 goals, `cache-layer` (never approved), `later` (never approved), are not approved, so no goal loop starts. Review them with `tether plan`, then approve them with `tether plan approve` (or start with `tether run --approve`)");
    // The missing id was added (a patch), nothing approved, nothing on stdout.
    assert!(
        fs::read_to_string(dir.path().join("plan.md"))
            .unwrap()
            .contains("## Goal: Cache layer\n<!-- id: cache-layer -->\nstatus: active\n")
    );
    assert_eq!(
        run.err,
        "added <!-- id: cache-layer --> to goal `Cache layer` (line 3)\n"
    );
    assert!(approvals(dir.path()).is_empty());
    assert!(run.stdout.is_empty());
}

#[test]
fn approve_locks_without_asking_and_then_there_is_nothing_to_do() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    let run = ensure(dir.path(), true, None);
    run.result.unwrap();
    assert!(run.err.contains("\nLocked 2 contracts"), "{}", run.err);
    assert_eq!(
        approvals(dir.path()),
        [
            ("cache-layer".to_owned(), "alice".to_owned()),
            ("later".to_owned(), "alice".to_owned())
        ]
    );
    let again = ensure(dir.path(), false, None);
    again.result.unwrap();
    assert_eq!(again.err, "");

    // A changed contract needs approval again.
    let text = fs::read_to_string(dir.path().join("plan.md")).unwrap();
    fs::write(
        dir.path().join("plan.md"),
        text.replace("p95 < 50ms", "p95 < 500ms"),
    )
    .unwrap();
    let run = ensure(dir.path(), false, None);
    let msg = format!("{:#}", run.result.unwrap_err());
    assert!(
        msg.starts_with("the contract of goal `cache-layer` (changed since alice approved it on "),
        "{msg}"
    );
}

#[test]
fn on_a_terminal_it_shows_the_contracts_and_asks() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    let run = ensure(dir.path(), false, Some("n\n"));
    assert!(run.result.is_err());
    assert!(approvals(dir.path()).is_empty());
    assert!(
        run.err.contains(
            "Approving cache-layer (never approved):\nCache layer  (#cache-layer, active)\n"
        ),
        "{}",
        run.err
    );
    assert!(
        run.err.ends_with("Approve these contracts? [y/N] "),
        "{}",
        run.err
    );

    let run = ensure(dir.path(), false, Some("y\n"));
    run.result.unwrap();
    assert_eq!(approvals(dir.path()).len(), 2);
}

#[test]
fn a_plan_that_does_not_parse_is_a_usage_error_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("plan.md"),
        PLAN.replace("status: open", "status: soon"),
    )
    .unwrap();
    let e = ensure(dir.path(), true, None).result.unwrap_err();
    assert!(e.chain().any(|c| c.is::<Failure>()));
    let msg = format!("{e:#}");
    assert!(msg.contains("plan.md:13: `soon` is not a status"), "{msg}");
}
