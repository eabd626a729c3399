//! A goal run scoped to some goals of the plan works on those alone: it shows the agent only
//! them, counts only their sign-offs, leaves the plan's other goals as they are, and is done once
//! its own are signed off while others are still active. Without a scope a run works on every
//! active goal, as it always did.

use std::collections::BTreeSet;
use std::path::Path;

use tether_core::goal::{self, GoalEnd, GoalSpec, LoopError, Stopped};
use tether_plan::{PlanDoc, Status};
use tether_store::RunStatus;
use tokio_util::sync::CancellationToken;

use super::goal::{Fixture, PLAN, scripted, sign_off, spec, start};
use crate::common::{Step, work};

/// [`PLAN`] and a second active goal, every subtask of it ticked (the clean-end reminder's
/// case in a run that works on it).
fn two_goals() -> String {
    PLAN.replace(
        "## Log\n",
        "## Goal: Write the manual\n<!-- id: manual -->\nstatus: active\n\
         done_when: MANUAL.md explains the greeting\n\n- [x] outline\n\n## Log\n",
    )
}

fn scoped_to(goals: &[&str], max: u32) -> GoalSpec {
    GoalSpec {
        scope: Some(
            goals
                .iter()
                .map(|g| (*g).to_owned())
                .collect::<BTreeSet<_>>(),
        ),
        ..spec(Some(max))
    }
}

/// What `complete_goal` leaves when it accepts `goal`: its verdict, then its own status line
/// set to `done`.
fn sign_off_goal(root: &Path, goal: &str) {
    sign_off(root, goal, false);
    set_status(root, goal, Status::Done);
}

fn set_status(root: &Path, goal: &str, status: Status) {
    tether_plan::file::patch(&root.join("plan.md"), |doc| doc.set_status(goal, status)).unwrap();
}

fn status(f: &Fixture, goal: &str) -> Status {
    let doc = PlanDoc::parse("plan.md", f.plan());
    doc.plan().goal(goal).unwrap().status()
}

#[tokio::test]
async fn a_scoped_run_works_its_goal_alone_and_ends_when_it_is_signed_off() {
    let f = Fixture::new(&two_goals());
    let exec = scripted(vec![
        work(|root| std::fs::write(root.join("hello.txt"), "hello").unwrap()),
        work(|root| sign_off_goal(root, "greet")),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, scoped_to(&["greet"], 10)).await;
    assert_eq!(
        end,
        GoalEnd::AllDone {
            iteration: 2,
            signed_off: vec!["greet".into()]
        }
    );
    assert_eq!(
        f.store().run(&run).unwrap().state.status,
        RunStatus::Completed
    );
    assert_eq!(status(&f, "manual"), Status::Active, "{}", f.plan());
    // The other goal's ticked subtasks are not this run's to remind about.
    assert!(f.rules(&run).is_empty(), "{:?}", f.rules(&run));
    for n in 1..=2 {
        let prompt = exec.prompt(n);
        assert!(prompt.contains("## greet — Greeting"), "{prompt}");
        assert!(prompt.contains("Goals of this run: 1."), "{prompt}");
        assert!(!prompt.contains("manual"), "{prompt}");
        assert!(!prompt.contains("Active goals:"), "{prompt}");
    }
}

#[tokio::test]
async fn without_a_scope_the_same_script_works_on_until_every_active_goal_is_done() {
    let f = Fixture::new(&two_goals());
    let exec = scripted(vec![
        work(|root| std::fs::write(root.join("hello.txt"), "hello").unwrap()),
        work(|root| sign_off_goal(root, "greet")),
        work(|root| sign_off_goal(root, "manual")),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert_eq!(
        end,
        GoalEnd::AllDone {
            iteration: 3,
            signed_off: vec!["greet".into(), "manual".into()]
        }
    );
    let prompt = exec.prompt(1);
    assert!(prompt.contains("Active goals: 2 of 2"), "{prompt}");
    assert!(prompt.contains("## manual — Write the manual"), "{prompt}");
    assert!(!prompt.contains("Goals of this run"), "{prompt}");
    assert!(f.rules(&run).contains(&"clean_end".to_owned()));
}

#[tokio::test]
async fn a_scoped_run_leaves_the_other_goals_edits_and_sign_offs_alone() {
    let f = Fixture::new(&two_goals());
    let exec = scripted(vec![
        // `manual` marked done by hand: a run working on it would set it back to active.
        work(|root| set_status(root, "manual", Status::Done)),
        // Active again, and signed off elsewhere with the plan not yet patched: a run working on
        // it would count the sign-off and mark it done.
        work(|root| {
            set_status(root, "manual", Status::Active);
            sign_off(root, "manual", false);
        }),
        work(|root| sign_off_goal(root, "greet")),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, scoped_to(&["greet"], 10)).await;
    assert_eq!(
        end,
        GoalEnd::AllDone {
            iteration: 3,
            signed_off: vec!["greet".into()]
        },
        "only the run's own goal is its sign-off"
    );
    assert!(f.rules(&run).is_empty(), "{:?}", f.rules(&run));
    assert_eq!(status(&f, "manual"), Status::Active, "{}", f.plan());
    for n in 1..=3 {
        assert!(!exec.prompt(n).contains("manual"), "{}", exec.prompt(n));
    }
}

#[tokio::test]
async fn a_resumed_scoped_run_keeps_its_scope() {
    let f = Fixture::new(&two_goals());
    let exec = scripted(vec![
        work(|root| std::fs::write(root.join("hello.txt"), "hello").unwrap()),
        work(|root| sign_off_goal(root, "greet")),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, scoped_to(&["greet"], 1)).await;
    assert_eq!(end, GoalEnd::Stopped(Stopped::BudgetSpent { iteration: 1 }));
    let end = goal::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert!(
        matches!(end, GoalEnd::AllDone { iteration: 2, ref signed_off } if signed_off == &["greet"]),
        "{end:?}"
    );
    assert!(!exec.prompt(2).contains("manual"), "{}", exec.prompt(2));
    assert_eq!(status(&f, "manual"), Status::Active);
}

#[tokio::test]
async fn a_scope_the_plan_cannot_give_work_is_refused() {
    let f = Fixture::new(&two_goals().replacen("status: active", "status: open", 1));
    let deps = f.deps(scripted(vec![Step::Idle]));
    let refused = |spec: GoalSpec| {
        let deps = deps.clone();
        async move {
            goal::start(&deps, spec, CancellationToken::new(), |_| {})
                .await
                .unwrap_err()
        }
    };
    let err = refused(scoped_to(&["greet", "nope"], 3)).await;
    assert!(matches!(err, LoopError::ScopeNotInPlan { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "plan.md has no goal `nope`; a run can be scoped only to goals of its plan"
    );
    // `greet` is open: another goal being active does not give this run work.
    let err = refused(scoped_to(&["greet"], 3)).await;
    assert!(matches!(err, LoopError::ScopeInactive { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "none of the goals the run is scoped to (greet) is active in plan.md; set `status: \
         active` on the ones to work on"
    );
    assert!(
        f.store().latest_run().unwrap().is_none(),
        "no run was created"
    );
}
