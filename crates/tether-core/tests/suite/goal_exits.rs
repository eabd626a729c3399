//! A goal leaves a goal run only by a sign-off that counts or by a person's cancel: a
//! judge-less accept in a run with a judge, a status edited to `open` or `cancelled`, the
//! agent's own cancel and a goal deleted from the plan are each reverted or pause the run, with
//! the rule recorded and a line in the plan's log — never "all goals done".

use std::path::Path;

use tether_core::goal::{GoalEnd, GoalSpec, Stopped};
use tether_store::{NewCancellation, RunStatus, Store};

use super::goal::{Fixture, PLAN, scripted, sign_off, sign_off_by, spec, start};
use crate::common::work;

fn set_status(root: &Path, status: &str) {
    let p = root.join("plan.md");
    let t = std::fs::read_to_string(&p).unwrap();
    std::fs::write(
        &p,
        t.replace("status: active", &format!("status: {status}")),
    )
    .unwrap();
}

fn cancel(root: &Path, by_person: bool) {
    let store = Store::open(root.join(".tether/tether.db")).unwrap();
    store
        .record_cancellation(&NewCancellation {
            plan_path: "plan.md".into(),
            goal_id: "greet".into(),
            by_person,
            by: if by_person { "ann" } else { "agent" }.into(),
            reason: "not wanted".into(),
            run_id: None,
        })
        .unwrap();
    set_status(root, "cancelled");
}

#[tokio::test]
async fn an_accept_without_the_judge_does_not_count_in_a_run_with_a_judge() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![
        // `tether goal complete greet --no-judge` from the agent's shell.
        work(|root| sign_off_by(root, "greet", true, None)),
        work(|root| sign_off(root, "greet", true)),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert_eq!(
        end,
        GoalEnd::AllDone {
            iteration: 2,
            signed_off: vec!["greet".into()]
        },
        "only the judged accept signs it off"
    );
    assert_eq!(f.rules(&run), ["unjudged_accept"]);
    assert!(
        exec.prompt(2).contains("signed off without the judge"),
        "{}",
        exec.prompt(2)
    );
    assert!(f.plan().contains("greet` was signed off without the judge"));
}

#[tokio::test]
async fn an_accept_without_the_judge_counts_in_a_run_started_without_one() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![work(|root| sign_off_by(root, "greet", true, None))]);
    let deps = f.deps(exec);
    let no_judge = GoalSpec {
        no_judge: true,
        ..spec(Some(10))
    };
    let (run, end) = start(&deps, no_judge).await;
    assert!(
        matches!(end, GoalEnd::AllDone { iteration: 1, .. }),
        "{end:?}"
    );
    assert!(f.rules(&run).is_empty());
}

#[tokio::test]
async fn a_goal_set_to_open_or_cancelled_by_an_edit_is_set_back_to_active() {
    for status in ["open", "cancelled"] {
        let f = Fixture::new(PLAN);
        let exec = scripted(vec![
            work(move |root| set_status(root, status)),
            work(|root| sign_off(root, "greet", true)),
        ]);
        let deps = f.deps(exec.clone());
        let (run, end) = start(&deps, spec(Some(10))).await;
        assert!(
            matches!(end, GoalEnd::AllDone { iteration: 2, ref signed_off } if signed_off == &["greet"]),
            "{status}: {end:?}"
        );
        assert_eq!(f.rules(&run), ["status_reverted"], "{status}");
        assert!(
            exec.prompt(2).contains(&format!(
                "`greet` was set to `status: {status}` without a person"
            )),
            "{}",
            exec.prompt(2)
        );
        assert!(exec.prompt(2).contains("Active goals: 1 of 1"));
        assert!(
            f.plan()
                .contains(&format!("`greet` was set to `{status}` without a sign-off")),
            "{}",
            f.plan()
        );
    }
}

#[tokio::test]
async fn the_agents_cancel_pauses_the_run_for_a_person() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![work(|root| cancel(root, false))]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(Some(10))).await;
    match &end {
        GoalEnd::Stopped(Stopped::Paused { reason }) => assert!(
            reason.contains("the agent cancelled goal `greet` (not wanted); a person must confirm"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.store().run(&run).unwrap().state.status, RunStatus::Paused);
    assert_eq!(f.rules(&run), ["cancel_unconfirmed"]);
    assert!(f.plan().contains("the agent cancelled goal `greet`"));
}

#[tokio::test]
async fn a_persons_cancel_ends_the_goal() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![work(|root| cancel(root, true))]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert_eq!(
        end,
        GoalEnd::AllDone {
            iteration: 1,
            signed_off: vec![]
        }
    );
    assert!(f.rules(&run).is_empty());
}

#[tokio::test]
async fn a_goal_deleted_from_the_plan_pauses_the_run() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![work(|root| {
        std::fs::write(root.join("plan.md"), "# Plan: demo\n\n## Log\n").unwrap();
    })]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(Some(10))).await;
    match &end {
        GoalEnd::Stopped(Stopped::Paused { reason }) => assert!(
            reason.contains("goal `greet` was removed from the plan"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.rules(&run), ["goal_removed"]);
    assert!(f.plan().contains("goal `greet` was removed from the plan"));
}
