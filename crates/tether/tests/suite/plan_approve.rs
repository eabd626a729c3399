//! `tether plan approve` and the store-dependent flags of `tether plan`, as a user runs them:
//! output snapshot-tested (times redacted), exit codes asserted, the store checked.

use std::fs;
use std::path::Path;

use crate::common::Out;

const PLAN: &str = "# Plan: cache\n\n## Goal: Cache layer\n<!-- id: cache -->\nstatus: active\n\
done_when: p95 < 50ms on the bench\nverify: cargo test -p cache\nfailure_modes:\n\
- cache silently bypassed\n- verify passes on a trivial test\nask_before: git push\n\n\
- [x] wire the client\n- [ ] eviction\n\n\
## Goal: Write the docs\nstatus: open\ndone_when: README documents the cache\n\n\
## Goal: Shipped before\n<!-- id: shipped -->\nstatus: done\ndone_when: it shipped\n\n\
## Goal: Signed off\n<!-- id: signed -->\nstatus: done\ndone_when: it was checked\n\n\
## Log\n- started\n";

/// `tether <args>` as a snapshot shows it, times redacted.
fn tether(dir: &Path, args: &[&str]) -> Out {
    crate::common::tether(dir, args).times()
}

fn store(dir: &Path) -> tether_store::Store {
    tether_store::Store::open(dir.join(".tether/tether.db")).unwrap()
}

fn accept(dir: &Path, goal: &str) {
    store(dir)
        .insert_verdict(&tether_store::NewVerdict {
            run_id: None,
            goal_id: goal.to_owned(),
            plan_path: "plan.md".to_owned(),
            attempt: 1,
            verify_exit: Some(0),
            verdict: tether_store::Verdict::Accept,
            kind: tether_store::VerdictKind::Accepted,
            reason: "checked".to_owned(),
            checks: serde_json::json!([]),
            missing: Vec::new(),
            judge_model: None,
            transcript_path: None,
            contract_hash: None,
            judges: Vec::new(),
        })
        .unwrap();
}

#[test]
fn approve_flows_and_the_flags_of_tether_plan() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    fs::write(ws.join("plan.md"), PLAN).unwrap();

    // No store yet: `tether plan` flags the done goals and notes the unapproved active one,
    // without creating .tether/.
    let plan = tether(ws, &["plan"]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(!ws.join(".tether").exists());
    insta::assert_snapshot!("flags_before_any_approval", plan.stdout);

    // Without ids, --all or a terminal: the contracts are shown, and it exits 2.
    let out = tether(ws, &["plan", "approve"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!("approve_without_ids_lists_and_refuses", out.stdout);
    insta::assert_snapshot!(out.stderr, @"error: the contracts of 2 goals, `cache` (never approved), `write-the-docs` (never approved), are not approved; name the goals (tether plan approve cache write-the-docs) or pass --all");
    // The missing id was added as a patch, and only that.
    assert_eq!(
        fs::read_to_string(ws.join("plan.md")).unwrap(),
        PLAN.replace(
            "## Goal: Write the docs\n",
            "## Goal: Write the docs\n<!-- id: write-the-docs -->\n"
        )
    );

    // Unknown ids exit 2 naming the known ones.
    let out = tether(ws, &["plan", "approve", "cache", "nope"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "no goal with id `nope` in [WS]/plan.md; known ids: cache, write-the-docs, shipped, signed"
        ),
        "{}",
        out.stderr
    );
    assert!(store(ws).approval("plan.md", "cache").unwrap().is_none());

    // --all locks every pending contract.
    let out = tether(ws, &["plan", "approve", "--all"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("approve_all", out.stdout);
    let approval = store(ws).approval("plan.md", "cache").unwrap().unwrap();
    assert_eq!(approval.approved_by, "tester");
    let out = tether(ws, &["plan", "approve"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        "Every open and active goal's contract is approved; nothing to do.\n"
    );

    // A softened contract is flagged; a sign-off clears the done flag of its goal.
    let text = fs::read_to_string(ws.join("plan.md")).unwrap();
    fs::write(
        ws.join("plan.md"),
        text.replace("p95 < 50ms", "p95 < 500ms"),
    )
    .unwrap();
    accept(ws, "signed");
    let plan = tether(ws, &["plan"]);
    insta::assert_snapshot!("flags_after_a_contract_changed", plan.stdout);

    // Re-approval by id shows the contract being approved.
    let out = tether(ws, &["plan", "approve", "cache"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("re_approve_by_id", out.stdout);
    let out = tether(ws, &["plan", "approve", "cache"]);
    assert_eq!(
        out.stdout,
        "cache: already approved as it is; nothing to do\n"
    );
    let plan = tether(ws, &["plan"]);
    assert!(!plan.stdout.contains("contract"), "{}", plan.stdout);

    // `tether plan --json` is the parsed plan, as before.
    let json = tether(ws, &["plan", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["file"], "plan.md");
    assert_eq!(v["plan"]["goals"][0]["id"]["value"], "cache");
}

#[test]
fn approve_refuses_a_plan_that_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("plan.md"),
        PLAN.replace("status: open", "status: someday"),
    )
    .unwrap();
    let out = tether(dir.path(), &["plan", "approve", "--all"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stderr, @r"
    error: [WS]/plan.md has 1 error
      [WS]/plan.md:17: `someday` is not a status; expected one of open, active, done, cancelled
    ");
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        PLAN.replace("status: open", "status: someday")
    );
}
