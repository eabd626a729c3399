//! Verdicts and contract approvals.

use serde_json::json;
use tether_store::{Event, NewVerdict, Seq, Verdict, VerdictKind};

use super::common::{memory_store, ralph_run};

fn verdict(verdict: Verdict, attempt: u32) -> NewVerdict {
    NewVerdict {
        run_id: None,
        goal_id: "cache-layer".into(),
        plan_path: "plan.md".into(),
        attempt,
        verify_exit: Some(0),
        verdict,
        kind: match verdict {
            Verdict::Accept => VerdictKind::Accepted,
            Verdict::Reject => VerdictKind::JudgeRejected,
        },
        reason: format!("attempt {attempt}"),
        checks: json!([{ "path": "src/cache.rs", "quote": "fn evict", "observation": "ok" }]),
        missing: vec!["bench".into()],
        judge_model: Some("judge-model".into()),
        transcript_path: Some(".tether/runs/r/judge-1.json".into()),
        contract_hash: Some("abc".into()),
        judges: Vec::new(),
    }
}

#[test]
fn verdicts_are_kept_in_order_and_an_accept_counts_as_signed_off() {
    let store = memory_store();
    let run = ralph_run(&store);
    assert!(
        !store
            .has_accepted_signoff("plan.md", "cache-layer")
            .unwrap()
    );
    let reject = NewVerdict {
        run_id: Some(run.clone()),
        ..verdict(Verdict::Reject, 1)
    };
    let first = store.insert_verdict(&reject).unwrap();
    assert!(
        !store
            .has_accepted_signoff("plan.md", "cache-layer")
            .unwrap()
    );
    let second = store.insert_verdict(&verdict(Verdict::Accept, 2)).unwrap();
    assert!(second > first);
    assert!(
        store
            .has_accepted_signoff("plan.md", "cache-layer")
            .unwrap()
    );
    assert!(
        !store
            .has_accepted_signoff("other.md", "cache-layer")
            .unwrap()
    );

    let records = store.verdicts_for_goal("plan.md", "cache-layer").unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].id, first);
    assert_eq!(records[0].decision, reject);
    assert_eq!(records[1].decision, verdict(Verdict::Accept, 2));

    let last = store.events(&run, Seq::START, 10).unwrap().pop().unwrap();
    assert_eq!(
        last.event,
        Some(Event::GoalVerdict {
            goal_id: "cache-layer".into(),
            verdict: Verdict::Reject,
            reason: "attempt 1".into(),
        })
    );
}

#[test]
fn the_newest_approval_is_in_force() {
    let store = memory_store();
    assert_eq!(store.approval("plan.md", "g").unwrap(), None);
    store
        .approve_contract("plan.md", "g", "h1", "alice")
        .unwrap();
    let newer = store.approve_contract("plan.md", "g", "h2", "bob").unwrap();
    store
        .approve_contract("plan.md", "other", "h3", "bob")
        .unwrap();
    assert_eq!(store.approval("plan.md", "g").unwrap(), Some(newer));
    let approvals = store
        .events_all_after(Seq::START, 10)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "contract_approved" && e.run_id.is_none())
        .count();
    assert_eq!(approvals, 3);
}

#[test]
fn verdicts_after_an_id_are_the_newer_ones_of_that_plan() {
    let store = memory_store();
    assert_eq!(store.last_verdict_id().unwrap(), 0);
    let first = store.insert_verdict(&verdict(Verdict::Reject, 1)).unwrap();
    let other = NewVerdict {
        plan_path: "other.md".into(),
        ..verdict(Verdict::Reject, 1)
    };
    store.insert_verdict(&other).unwrap();
    let third = store.insert_verdict(&verdict(Verdict::Accept, 2)).unwrap();
    assert_eq!(store.last_verdict_id().unwrap(), third);
    let all: Vec<i64> = store
        .verdicts_after("plan.md", 0)
        .unwrap()
        .iter()
        .map(|v| v.id)
        .collect();
    assert_eq!(all, vec![first, third]);
    let newer = store.verdicts_after("plan.md", first).unwrap();
    assert_eq!(newer.len(), 1);
    assert_eq!(newer[0].decision.verdict, Verdict::Accept);
}
