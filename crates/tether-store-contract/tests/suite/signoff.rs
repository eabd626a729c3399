//! Verdicts, contract approvals, sign-offs in progress and cancellations, on both backends.

use serde_json::json;
use tether_store::{
    ContractTerms, JudgeVote, NewCancellation, NewVerdict, Reservation, Verdict, VerdictKind,
};

use super::{Backend, on_both_backends, run};

on_both_backends!(
    verdicts_are_kept_by_goal_run_and_order,
    a_panels_votes_are_kept_with_its_verdict,
    the_newest_approval_is_in_force,
    an_approval_keeps_the_terms_that_bound_the_agent,
    one_signoff_of_a_goal_runs_at_a_time,
    the_latest_cancellation_of_a_goal_is_kept,
);

fn verdict(
    run: Option<&tether_store::RunId>,
    goal: &str,
    attempt: u32,
    verdict: Verdict,
) -> NewVerdict {
    NewVerdict {
        run_id: run.cloned(),
        goal_id: goal.into(),
        plan_path: "plan.md".into(),
        attempt,
        verify_exit: Some(0),
        verdict,
        kind: match verdict {
            Verdict::Accept => VerdictKind::Accepted,
            Verdict::Reject => VerdictKind::JudgeRejected,
        },
        reason: "judged".into(),
        checks: json!([{"path": "src/lib.rs", "quote": "fn main", "observation": "there"}]),
        missing: vec!["a test".into()],
        judge_model: Some("judge-1".into()),
        transcript_path: Some(".tether/runs/x/judge.jsonl".into()),
        contract_hash: Some("abc".into()),
        judges: Vec::new(),
    }
}

fn verdicts_are_kept_by_goal_run_and_order(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let first = store
        .insert_verdict(&verdict(Some(&id), "g1", 1, Verdict::Reject))
        .unwrap();
    assert!(!store.has_accepted_signoff("plan.md", "g1").unwrap());
    let second = store
        .insert_verdict(&verdict(Some(&id), "g1", 2, Verdict::Accept))
        .unwrap();
    store
        .insert_verdict(&verdict(None, "g2", 1, Verdict::Reject))
        .unwrap();
    assert!(store.has_accepted_signoff("plan.md", "g1").unwrap());
    assert!(second > first);
    let g1 = store.verdicts_for_goal("plan.md", "g1").unwrap();
    assert_eq!(g1.len(), 2);
    assert_eq!(g1[1].decision, verdict(Some(&id), "g1", 2, Verdict::Accept));
    assert_eq!(store.verdicts_for_run(&id).unwrap(), g1);
    let after = store.verdicts_after("plan.md", first).unwrap();
    assert_eq!(after.len(), 2);
    assert_eq!(store.last_verdict_id().unwrap(), after[1].id);
    let kinds: Vec<_> = store
        .events(&id, tether_store::Seq::START, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["run_started", "goal_verdict", "goal_verdict"]);
}

fn a_panels_votes_are_kept_with_its_verdict(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let vote = |model: &str, kind, cost_usd| JudgeVote {
        model: model.into(),
        kind,
        reason: format!("{model} ruled"),
        calls: 3,
        input_tokens: 1_200,
        output_tokens: 80,
        cost_usd,
        transcript_path: Some(format!(".tether/runs/x/judge-g1-1-{model}.jsonl")),
    };
    let mut panel = verdict(Some(&id), "g1", 1, Verdict::Reject);
    panel.judges = vec![
        vote("first", VerdictKind::Accepted, Some(0.012)),
        vote("second", VerdictKind::JudgeRejected, None),
    ];
    store.insert_verdict(&panel).unwrap();
    let kept = store.verdicts_for_run(&id).unwrap();
    assert_eq!(
        kept[0].decision, panel,
        "every vote, in order, with its usage"
    );
    let one = verdict(Some(&id), "g1", 2, Verdict::Accept);
    store.insert_verdict(&one).unwrap();
    assert!(
        store.verdicts_for_goal("plan.md", "g1").unwrap()[1]
            .decision
            .judges
            .is_empty()
    );
}

fn the_newest_approval_is_in_force(b: &Backend) {
    let store = &b.store;
    assert_eq!(store.approval("plan.md", "g1").unwrap(), None);
    store
        .approve_contract("plan.md", "g1", "h1", "ana")
        .unwrap();
    let second = store
        .approve_contract("plan.md", "g1", "h2", "bob")
        .unwrap();
    assert_eq!(store.approval("plan.md", "g1").unwrap(), Some(second));
    assert_eq!(store.approval("other.md", "g1").unwrap(), None);
}

fn an_approval_keeps_the_terms_that_bound_the_agent(b: &Backend) {
    let store = &b.store;
    let terms = ContractTerms {
        network: true,
        budget: Some("60 tokens, $1".into()),
        ask_before: vec!["git push".into()],
    };
    let approved = store
        .approve_contract_terms("plan.md", "g1", "h1", &terms, "ana")
        .unwrap();
    assert_eq!(approved.terms.as_ref(), Some(&terms));
    let read = b.other().approval("plan.md", "g1").unwrap().unwrap();
    assert_eq!(read, approved);
    let budget = read.terms.unwrap().budget().unwrap();
    assert_eq!((budget.tokens, budget.cost_usd), (Some(60), Some(1.0)));
    // An approval without terms reads back without them.
    store
        .approve_contract("plan.md", "g2", "h2", "bob")
        .unwrap();
    assert_eq!(
        store.approval("plan.md", "g2").unwrap().unwrap().terms,
        None
    );
}

fn one_signoff_of_a_goal_runs_at_a_time(b: &Backend) {
    let store = &b.store;
    store
        .insert_verdict(&verdict(None, "g1", 1, Verdict::Reject))
        .unwrap();
    let alive = |_: &str| false;
    let gone = |_: &str| true;
    assert_eq!(
        store.reserve_signoff("plan.md", "g1", "a", &alive).unwrap(),
        Reservation::Reserved { attempt: 2 }
    );
    let Reservation::Busy(running) = store.reserve_signoff("plan.md", "g1", "b", &alive).unwrap()
    else {
        panic!("a second sign-off was let through")
    };
    assert_eq!((running.attempt, running.holder.as_str()), (2, "a"));
    assert_eq!(
        store.reserve_signoff("plan.md", "g1", "b", &gone).unwrap(),
        Reservation::Reserved { attempt: 2 }
    );
    store.release_signoff("plan.md", "g1", "a").unwrap();
    assert!(matches!(
        b.other()
            .reserve_signoff("plan.md", "g1", "c", &alive)
            .unwrap(),
        Reservation::Busy(_)
    ));
    store.release_signoff("plan.md", "g1", "b").unwrap();
    assert_eq!(
        store.reserve_signoff("plan.md", "g1", "c", &alive).unwrap(),
        Reservation::Reserved { attempt: 2 }
    );
}

fn the_latest_cancellation_of_a_goal_is_kept(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    assert_eq!(store.latest_cancellation("plan.md", "g1").unwrap(), None);
    let by_agent = NewCancellation {
        plan_path: "plan.md".into(),
        goal_id: "g1".into(),
        by_person: false,
        by: id.to_string(),
        reason: "impossible".into(),
        run_id: Some(id),
    };
    let first = store.record_cancellation(&by_agent).unwrap();
    let by_person = NewCancellation {
        by_person: true,
        by: "ana".into(),
        run_id: None,
        ..by_agent
    };
    let second = store.record_cancellation(&by_person).unwrap();
    assert!(second > first);
    assert_eq!(store.last_cancellation_id().unwrap(), second);
    let latest = store.latest_cancellation("plan.md", "g1").unwrap().unwrap();
    assert_eq!((latest.id, latest.cancel), (second, by_person));
}
