//! Stage 0 (refusals), `--no-judge`, and `cancel_goal`.

use tether_model::scripted::{Script, Turn};
use tether_signoff::{CancelOutcome, NO_JUDGE_REASON, SignoffOutcome};
use tokio_util::sync::CancellationToken;

use crate::common::{Fx, PLAN, scripted};

async fn refusal(fx: &Fx, id: &str) -> String {
    let script = Script::turns([]).then_repeat(Turn::text("{}"));
    let outcome = fx
        .signoff(Some(scripted(&script)))
        .complete(id, "done", &[], &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(script.served(), 0, "a refusal asks no judge");
    match outcome {
        SignoffOutcome::Refused { reason, .. } => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unapproved_contract_is_refused_with_the_command_to_approve_it() {
    let fx = Fx::new();
    fx.write("plan.md", &PLAN.replace("status: open", "status: active"));
    let reason = refusal(&fx, "later").await;
    assert!(reason.contains("has not been approved"), "{reason}");
    assert!(reason.contains("`tether plan approve later`"), "{reason}");
    assert!(fx.verdicts().is_empty());
    assert!(!fx.root().join(".tether/signoff").exists(), "nothing ran");
}

#[tokio::test]
async fn a_contract_edited_after_approval_is_refused() {
    let fx = Fx::new();
    fx.write(
        "plan.md",
        &PLAN.replace("verify: sh check.sh", "verify: true"),
    );
    let reason = refusal(&fx, "add").await;
    assert!(
        reason.contains("changed since alice approved it"),
        "{reason}"
    );
    assert!(reason.contains("`tether plan approve add`"), "{reason}");
    // Ticking boxes and renaming are not contract changes.
    fx.write(
        "plan.md",
        &PLAN
            .replace("Add numbers", "Add two numbers")
            .replace("- [x]", "- [ ]"),
    );
    let script = Script::turns([]).then_repeat(Turn::text("no verdict"));
    let outcome = fx.complete(Some(scripted(&script))).await;
    assert!(
        !matches!(outcome, SignoffOutcome::Refused { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn unknown_closed_and_unparsable_goals_are_refused_with_clear_reasons() {
    let fx = Fx::new();
    let reason = refusal(&fx, "nope").await;
    assert_eq!(
        reason,
        "no goal with id `nope` in plan.md; known ids: add, later"
    );

    fx.write("plan.md", &PLAN.replace("status: active", "status: done"));
    assert_eq!(refusal(&fx, "add").await, "goal `add` is already done");
    fx.write(
        "plan.md",
        &PLAN.replace("status: active", "status: cancelled"),
    );
    assert!(
        refusal(&fx, "add")
            .await
            .starts_with("goal `add` is cancelled")
    );

    fx.write(
        "plan.md",
        &PLAN.replace("status: active", "status: finished"),
    );
    let reason = refusal(&fx, "add").await;
    assert!(
        reason.contains("plan.md:5: "),
        "names file and line: {reason}"
    );
    assert!(reason.contains("`finished` is not a status"), "{reason}");

    fx.write(
        "plan.md",
        &PLAN.replace(
            "done_when: `add` returns the sum and a test checks it\n",
            "",
        ),
    );
    assert!(refusal(&fx, "add").await.contains("has no `done_when:`"));

    std::fs::remove_file(fx.root().join("plan.md")).unwrap();
    assert!(refusal(&fx, "add").await.contains("plan.md does not exist"));
}

#[tokio::test]
async fn no_judge_signs_off_on_verify_alone_and_says_so() {
    let fx = Fx::new();
    let outcome = fx.complete(None).await;
    let SignoffOutcome::Accepted {
        reason,
        judge_model,
        verify,
        transcript,
        ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(reason, NO_JUDGE_REASON);
    assert_eq!((judge_model, transcript), (&None, &None));
    assert!(verify.as_ref().unwrap().passed());
    assert_eq!(fx.status("add"), "done");
    let v = &fx.verdicts()[0].decision;
    assert_eq!((v.judge_model.as_deref(), v.verify_exit), (None, Some(0)));
    assert_eq!(v.reason, NO_JUDGE_REASON);
    assert!(
        fx.last_log()
            .ends_with(&format!(" add signed off: {NO_JUDGE_REASON}"))
    );
}

#[tokio::test]
async fn no_verify_and_no_judge_is_nothing_to_check() {
    let fx = Fx::new();
    fx.write("plan.md", &PLAN.replace("verify: sh check.sh\n", ""));
    fx.approve("add");
    let outcome = fx.complete(None).await;
    assert!(
        outcome.reason().starts_with("nothing to check"),
        "{outcome:?}"
    );
    assert!(fx.verdicts().is_empty());
    assert_eq!(fx.status("add"), "active");
}

#[tokio::test]
async fn cancel_goal_closes_an_open_or_active_goal_with_a_log_line() {
    let fx = Fx::new();
    let s = fx.signoff(None);
    let done = s.cancel_goal("later", "replaced by `add`").unwrap();
    assert_eq!(
        done,
        CancelOutcome::Cancelled {
            goal_id: "later".into(),
            reason: "replaced by `add`".into(),
            by_person: false,
        }
    );
    assert_eq!(fx.status("later"), "cancelled");
    let log = fx.last_log();
    let said = " later cancelled by the agent (a person must confirm): replaced by `add`";
    assert!(log.ends_with(said), "{log}");
    assert_eq!(log.len(), "2026-01-01 00:00".len() + said.len());
    // Only the status value and the new log line changed.
    let expected = PLAN.replace("status: open", "status: cancelled").replace(
        "- 2026-01-01 00:00 started\n",
        &format!("- 2026-01-01 00:00 started\n- {log}\n"),
    );
    assert_eq!(fx.read("plan.md"), expected);

    for (id, reason, why) in [
        ("later", "again", "goal `later` is cancelled"),
        ("add", "  ", "a reason is required"),
        ("nope", "x", "no goal with id `nope`"),
    ] {
        match s.cancel_goal(id, reason).unwrap() {
            CancelOutcome::Refused { reason, .. } => assert!(reason.starts_with(why), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
    assert!(fx.verdicts().is_empty(), "cancelling records no verdict");
}

#[tokio::test]
async fn a_person_confirms_the_agents_cancel_or_cancels_outright_and_the_store_says_who() {
    let fx = Fx::new();
    let s = fx.signoff(None);
    s.cancel_goal("later", "replaced by `add`").unwrap();
    let store = || fx.journal.store();
    let by_agent = store()
        .latest_cancellation("plan.md", "later")
        .unwrap()
        .unwrap();
    assert!(!by_agent.cancel.by_person);
    // The person confirms the agent's cancel: the goal stays cancelled, the store says who.
    let confirmed = s.cancel_goal_by_person("later", "agreed", "ann").unwrap();
    assert!(
        matches!(
            confirmed,
            CancelOutcome::Cancelled {
                by_person: true,
                ..
            }
        ),
        "{confirmed:?}"
    );
    assert_eq!(fx.status("later"), "cancelled");
    assert!(
        fx.last_log()
            .ends_with(" later cancel confirmed by ann: agreed")
    );
    let latest = store()
        .latest_cancellation("plan.md", "later")
        .unwrap()
        .unwrap();
    assert_eq!(
        (latest.cancel.by_person, latest.cancel.by.as_str()),
        (true, "ann")
    );
    // Once confirmed it is closed like any cancelled goal.
    assert!(matches!(
        s.cancel_goal_by_person("later", "again", "ann").unwrap(),
        CancelOutcome::Refused { .. }
    ));
    // A person cancels an active goal outright.
    s.cancel_goal_by_person("add", "not needed", "ann").unwrap();
    assert_eq!(fx.status("add"), "cancelled");
    assert!(fx.last_log().ends_with(" add cancelled by ann: not needed"));
}

#[tokio::test]
async fn a_second_sign_off_while_one_runs_is_refused_naming_the_running_attempt() {
    let fx = Fx::new();
    // verify says it started, then waits for `go`.
    fx.write(
        "check.sh",
        "touch started; while [ ! -f go ]; do sleep 0.02; done; grep -q 'a + b' src/lib.rs\n",
    );
    let s = fx.signoff(None);
    let cancel = CancellationToken::new();
    let first = {
        let s = s.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { s.complete("add", "first", &[], &cancel).await })
    };
    let started = fx.root().join("started");
    tether_testkit::wait_until_async(
        "verify to start",
        std::time::Duration::from_secs(30),
        || started.exists().then_some(()),
    )
    .await
    .unwrap();
    let second = s.complete("add", "second", &[], &cancel).await.unwrap();
    match &second {
        SignoffOutcome::Refused { reason, .. } => assert!(
            reason.starts_with("a sign-off of `add` is already running (attempt 1)"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    fx.write("go", "");
    let first = first.await.unwrap().unwrap();
    assert!(first.is_accepted(), "{first:?}");
    let attempts: Vec<u32> = fx.verdicts().iter().map(|v| v.decision.attempt).collect();
    assert_eq!(attempts, [1], "one attempt, recorded once");
}

#[tokio::test]
async fn a_sign_off_that_gave_up_leaves_the_next_attempt_free() {
    let fx = Fx::new();
    fx.write("check.sh", "exit 1\n");
    let s = fx.signoff(None);
    let cancel = CancellationToken::new();
    for n in 1..=2 {
        // Some work between the attempts (an unchanged tree is not checked again).
        fx.write(&format!("note-{n}.txt"), "tried\n");
        let o = s.complete("add", "try", &[], &cancel).await.unwrap();
        assert!(
            matches!(o, SignoffOutcome::Rejected { attempt, .. } if attempt == n),
            "{o:?}"
        );
    }
}
