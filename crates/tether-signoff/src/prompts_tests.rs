#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use crate::changed::{ChangedLines, FileLines, Unknown};
use crate::{CancelOutcome, Check, SignoffOutcome, VerifyResult};

fn verify(exit: Option<i32>, timed_out: bool, tail: &str) -> VerifyResult {
    VerifyResult {
        command: "cargo test -p cache".into(),
        exit_code: exit,
        signal: None,
        timed_out,
        tail: tail.into(),
        total_bytes: 1234,
        output_hash: "sha256:00".into(),
        log_path: ".tether/runs/r-1/verify-cache-layer-2.log".into(),
        // A timed-out command runs a little past its limit (the kill's grace period).
        elapsed_ms: 602_000,
        timeout_ms: 600_000,
    }
}

#[test]
fn judge_system_prompt() {
    insta::assert_snapshot!(super::SYSTEM);
}

#[test]
fn judge_request() {
    let paths = vec!["src/cache.rs".to_owned(), "tests/cache.rs".to_owned()];
    let passed = verify(Some(0), false, "test result: ok. 12 passed\n");
    let changed = ChangedLines::known(
        [
            (
                PathBuf::from("src/cache.rs"),
                FileLines::Ranges(vec![3..=3, 10..=49]),
            ),
            (PathBuf::from("tests/cache.rs"), FileLines::Whole),
        ]
        .into_iter()
        .collect(),
    );
    let unknown = ChangedLines::unknown(Unknown::NoStart);
    let surface = crate::surface::of(Some("cargo test -p cache"), &changed);
    assert_eq!(surface, ["tests/cache.rs"]);
    let brief = super::JudgeBrief {
        goal_id: "cache-layer",
        title: "Implement cache layer",
        done_when: "p95 < 50ms on the bench",
        verify_command: Some("cargo test -p cache"),
        failure_modes: vec!["cache silently bypassed", "verify passes on a trivial test"],
        evidence: "Added an LRU cache; the bench shows p95 31ms.",
        paths: &paths,
        verify: Some(&passed),
        diff: "changes since the run began (git diff --stat):\n src/cache.rs   | 40 +++\n \
               tests/cache.rs | 12 +++\n 2 files changed, 52 insertions(+)",
        changed: &changed,
        surface: &surface,
    };
    let with_verify = super::request(&brief);
    let bare = super::request(&super::JudgeBrief {
        verify_command: None,
        verify: None,
        failure_modes: Vec::new(),
        evidence: " ",
        paths: &[],
        diff: "what changed since the run began is not known: the run recorded no snapshot of \
               the workspace when it began (an older tether began it)",
        changed: &unknown,
        ..brief
    });
    insta::assert_snapshot!(format!(
        "--- with verify\n{with_verify}\n--- without verify, evidence or paths\n{bare}\n\
         --- last step\n{}",
        super::LAST_STEP
    ));
}

#[test]
fn tool_texts() {
    let accepted = SignoffOutcome::Accepted {
        goal_id: "cache-layer".into(),
        attempt: 2,
        reason: "the cache is wired and tested".into(),
        verify: Some(verify(Some(0), false, "ok\n")),
        judge_model: Some("judge-model".into()),
        checks: vec![Check {
            path: "src/cache.rs".into(),
            quote: "fn get".into(),
            observation: "reads through".into(),
            line: None,
        }],
        surface: vec!["tests/cache.rs".into()],
        transcript: Some(".tether/runs/r-1/judge-cache-layer-2.jsonl".into()),
    };
    let no_judge = SignoffOutcome::Accepted {
        goal_id: "cache-layer".into(),
        attempt: 1,
        reason: crate::NO_JUDGE_REASON.into(),
        verify: Some(verify(Some(0), false, "ok\n")),
        judge_model: None,
        checks: Vec::new(),
        surface: Vec::new(),
        transcript: None,
    };
    let verify_failed = SignoffOutcome::Rejected {
        goal_id: "cache-layer".into(),
        attempt: 3,
        reason: "verify failed: `cargo test -p cache` exited 101".into(),
        missing: vec!["the verify command `cargo test -p cache` must pass (it exited 101)".into()],
        verify: Some(verify(Some(101), false, "test cache::evicts ... FAILED\n")),
        judge_model: None,
        judge_unavailable: false,
        surface: Vec::new(),
        transcript: None,
    };
    let timed_out = SignoffOutcome::Rejected {
        goal_id: "cache-layer".into(),
        attempt: 3,
        reason: "verify failed: `cargo test -p cache` timed out after 600 s (its process group \
                 was killed)"
            .into(),
        missing: Vec::new(),
        verify: Some(verify(None, true, "running 12 tests\n")),
        judge_model: None,
        judge_unavailable: false,
        surface: Vec::new(),
        transcript: None,
    };
    let judged = SignoffOutcome::Rejected {
        goal_id: "cache-layer".into(),
        attempt: 4,
        reason: "eviction is not implemented".into(),
        missing: vec![
            "an eviction policy".into(),
            "a test that a full cache evicts".into(),
        ],
        verify: Some(verify(Some(0), false, "ok\n")),
        judge_model: Some("judge-model".into()),
        judge_unavailable: false,
        surface: vec!["tests/cache.rs".into()],
        transcript: Some(".tether/runs/r-1/judge-cache-layer-4.jsonl".into()),
    };
    let unavailable = SignoffOutcome::Rejected {
        goal_id: "cache-layer".into(),
        attempt: 5,
        reason: "judge unavailable: no verdict within 600 s (judge.timeout_secs)".into(),
        missing: Vec::new(),
        verify: Some(verify(Some(0), false, "ok\n")),
        judge_model: Some("judge-model".into()),
        judge_unavailable: true,
        surface: Vec::new(),
        transcript: Some(".tether/runs/r-1/judge-cache-layer-5.jsonl".into()),
    };
    let refused = SignoffOutcome::Refused {
        goal_id: "cache-layer".into(),
        reason: "the contract of goal `cache-layer` has not been approved by a human; approve \
                 it with `tether plan approve cache-layer`"
            .into(),
    };
    let mut all = format!(
        "--- complete_goal description\n{}\n--- cancel_goal description\n{}\n",
        super::COMPLETE_GOAL_DESCRIPTION,
        super::CANCEL_GOAL_DESCRIPTION
    );
    for (name, o) in [
        ("accepted", accepted),
        ("accepted without a judge", no_judge),
        ("verify failed", verify_failed),
        ("verify timed out", timed_out),
        ("judge rejected", judged),
        ("judge unavailable", unavailable),
        ("refused", refused),
    ] {
        all.push_str(&format!("--- {name}\n{}\n", o.tool_text()));
    }
    for o in [
        CancelOutcome::Cancelled {
            goal_id: "old".into(),
            reason: "replaced by cache-layer".into(),
            by_person: false,
        },
        CancelOutcome::Cancelled {
            goal_id: "old".into(),
            reason: "replaced by cache-layer".into(),
            by_person: true,
        },
        CancelOutcome::Refused {
            goal_id: "old".into(),
            reason: "goal `old` is already done".into(),
        },
    ] {
        all.push_str(&format!("--- cancel\n{}\n", o.tool_text()));
    }
    insta::assert_snapshot!(all);
}
