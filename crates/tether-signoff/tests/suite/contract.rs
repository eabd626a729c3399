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
            reason: "replaced by `add`".into()
        }
    );
    assert_eq!(fx.status("later"), "cancelled");
    let log = fx.last_log();
    assert!(
        log.ends_with(" later cancelled: replaced by `add`"),
        "{log}"
    );
    assert_eq!(
        log.len(),
        "2026-01-01 00:00".len() + " later cancelled: replaced by `add`".len()
    );
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
