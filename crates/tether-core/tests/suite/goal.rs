//! The goal loop driven by a scripted in-test executor that edits the workspace: completion,
//! each rule firing, budget and resume, pause and messages, and reconciling the plan with the
//! store.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tether_config::{Config, Workspace};
use tether_core::goal::{self, Deps, GoalEnd, GoalSpec, LoopError, RuleSettings, Stopped};
use tether_human::{Console, Desk};
use tether_plan::PlanDoc;
use tether_store::Journal;
use tether_store::{Event, NewVerdict, Rule, RunId, RunStatus, Seq, Store, Verdict, VerdictKind};
use tokio_util::sync::CancellationToken;

use crate::common::{Scripted, Step, work};

/// The goal loop's script: `steps`, then idle turns.
pub(super) fn scripted(steps: Vec<Step>) -> Arc<Scripted> {
    Scripted::then(steps, || Step::Idle)
}

pub(super) const PLAN: &str = "# Plan: demo\n\n## Goal: Greeting\n<!-- id: greet -->\nstatus: active\n\
    done_when: hello.txt says hello\nverify: grep -q hello hello.txt\nfailure_modes:\n\
    - the file is empty\n- verify greps the wrong file\n\n- [ ] write hello.txt\n\n## Log\n";

pub(super) struct Fixture {
    _dir: tempfile::TempDir,
    pub(super) ws: Workspace,
}

impl Fixture {
    pub(super) fn new(plan: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        std::fs::write(dir.path().join("plan.md"), plan).unwrap();
        std::fs::create_dir_all(ws.state_dir()).unwrap();
        Fixture { _dir: dir, ws }
    }
    pub(super) fn deps(&self, exec: Arc<Scripted>) -> Deps {
        let journal = Journal::new(Store::open(self.ws.db_path()).unwrap(), Vec::new()).unwrap();
        Deps {
            ws: self.ws.clone(),
            journal: journal.clone(),
            executor: exec,
            human: Desk::from_config(
                &Config::default(),
                &self.ws,
                journal,
                (Console::Absent, tether_human::registry::Reach::ANYTHING),
            ),
            usage: tether_core::looping::UsageWaits::default(),
            price: None,
            loop_judge: None,
            env_remove: Vec::new(),
            git: tether_git::Confinement::default(),
            isolation: Default::default(),
            bounds: None,
            pool: None,
        }
    }
    pub(super) fn store(&self) -> Store {
        Store::open(self.ws.db_path()).unwrap()
    }
    pub(super) fn plan(&self) -> String {
        std::fs::read_to_string(self.ws.root().join("plan.md")).unwrap()
    }
    pub(super) fn rules(&self, run: &RunId) -> Vec<String> {
        self.store()
            .events(run, Seq(0), usize::MAX)
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.event {
                Some(Event::RuleFired { rule, .. }) => Some(rule.to_string()),
                _ => None,
            })
            .collect()
    }
}

pub(super) fn spec(max: Option<u32>) -> GoalSpec {
    GoalSpec {
        plan: "plan.md".into(),
        max_iterations: max,
        budget: tether_store::Budget::default(),
        threshold: 2,
        no_judge: false,
        rules: RuleSettings::default(),
        max_consecutive_failures: 3,
        context: tether_config::IterationContext::Fresh,
        scope: None,
        settling: None,
    }
}

/// What `complete_goal` leaves behind when it accepts: the verdict in the store, then
/// `status: done` in the plan.
pub(super) fn sign_off(root: &Path, goal: &str, patch_plan: bool) {
    sign_off_by(root, goal, patch_plan, Some("judge"));
}

/// [`sign_off`] with the judge named, or none (`--no-judge`).
pub(super) fn sign_off_by(root: &Path, goal: &str, patch_plan: bool, judge: Option<&str>) {
    let store = Store::open(root.join(".tether/tether.db")).unwrap();
    let text = std::fs::read_to_string(root.join("plan.md")).unwrap();
    let doc = PlanDoc::parse("plan.md", text.clone());
    let hash = doc.plan().goal(goal).unwrap().contract_hash();
    store
        .insert_verdict(&NewVerdict {
            run_id: None,
            goal_id: goal.into(),
            plan_path: "plan.md".into(),
            attempt: next_attempt(&store, goal),
            verify_exit: Some(0),
            verdict: Verdict::Accept,
            kind: VerdictKind::Accepted,
            reason: "hello.txt says hello".into(),
            checks: json!([{"path": "hello.txt", "quote": "hello", "observation": "ok"}]),
            missing: vec![],
            judge_model: judge.map(str::to_owned),
            transcript_path: None,
            contract_hash: Some(hash),
            judges: Vec::new(),
        })
        .unwrap();
    if patch_plan {
        std::fs::write(
            root.join("plan.md"),
            text.replace("status: active", "status: done"),
        )
        .unwrap();
    }
}

/// One more than the goal's recorded attempts (attempt numbers are unique).
fn next_attempt(store: &Store, goal: &str) -> u32 {
    let n = store.verdicts_for_goal("plan.md", goal).unwrap().len();
    u32::try_from(n).unwrap() + 1
}

fn reject(root: &Path, reason: &str, exit: Option<i32>) {
    let store = Store::open(root.join(".tether/tether.db")).unwrap();
    store
        .insert_verdict(&NewVerdict {
            run_id: None,
            goal_id: "greet".into(),
            plan_path: "plan.md".into(),
            attempt: next_attempt(&store, "greet"),
            verify_exit: exit,
            verdict: Verdict::Reject,
            // As recorded: verify's failure, or the judge's.
            kind: if reason.starts_with("verify") {
                VerdictKind::VerifyFailed
            } else {
                VerdictKind::JudgeUnavailable
            },
            reason: reason.into(),
            checks: json!([]),
            missing: vec!["a test".into()],
            // As recorded: the judge is only asked (and named) once verify passed.
            judge_model: (!reason.starts_with("verify")).then(|| "judge".into()),
            transcript_path: None,
            contract_hash: None,
            judges: Vec::new(),
        })
        .unwrap();
}

pub(super) async fn start(deps: &Deps, spec: GoalSpec) -> (RunId, GoalEnd) {
    goal::start(deps, spec, CancellationToken::new(), |_| {})
        .await
        .unwrap()
}

#[tokio::test]
async fn a_signed_off_goal_ends_the_run() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![
        work(|root| std::fs::write(root.join("hello.txt"), "hello").unwrap()),
        work(|root| sign_off(root, "greet", true)),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(10))).await;
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
    assert!(exec.prompt(1).contains("## greet — Greeting"));
    assert!(exec.prompt(2).contains("Iteration 1 ended with: worked"));
}

#[tokio::test]
async fn a_goal_marked_done_by_hand_is_set_back_to_active() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![
        work(|root| {
            let p = root.join("plan.md");
            let t = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, t.replace("status: active", "status: done")).unwrap();
        }),
        work(|root| sign_off(root, "greet", true)),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert!(
        matches!(end, GoalEnd::AllDone { iteration: 2, .. }),
        "{end:?}"
    );
    assert_eq!(f.rules(&run), ["unsigned_done"]);
    assert!(
        exec.prompt(2)
            .contains("was marked `status: done` without a sign-off")
    );
    assert!(exec.prompt(2).contains("Active goals: 1 of 1"));
}

#[tokio::test]
async fn a_recorded_sign_off_whose_plan_patch_was_lost_is_completed() {
    // A crash between recording the verdict and writing `status: done`.
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![work(|root| sign_off(root, "greet", false))]);
    let deps = f.deps(exec);
    let (_, end) = start(&deps, spec(Some(10))).await;
    assert!(
        matches!(end, GoalEnd::AllDone { iteration: 1, .. }),
        "{end:?}"
    );
    assert!(f.plan().contains("status: done"));
}

#[tokio::test]
async fn idle_iterations_trip_the_spin_guard() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![Step::Idle, Step::Idle]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert!(
        matches!(end, GoalEnd::Blocked { rule, .. } if rule == Rule::SpinGuard),
        "{end:?}"
    );
    assert_eq!(
        f.store().run(&run).unwrap().state.status,
        RunStatus::Blocked
    );
    assert_eq!(f.rules(&run), ["spin_guard"]);
}

#[tokio::test]
async fn edits_without_plan_upkeep_bring_the_reminder() {
    let f = Fixture::new(PLAN);
    let touch = |n: u32| work(move |root| std::fs::write(root.join(format!("f{n}")), "x").unwrap());
    let exec = scripted(vec![touch(1), touch(2), touch(3), touch(4)]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(4))).await;
    assert_eq!(end, GoalEnd::Stopped(Stopped::BudgetSpent { iteration: 4 }));
    assert_eq!(f.rules(&run), ["reminder"]);
    assert!(!exec.prompt(3).contains("Reminder:"));
    assert!(exec.prompt(4).contains("Reminder: you have changed files"));
}

#[tokio::test]
async fn ticked_subtasks_without_sign_off_remind_twice_then_pause() {
    let f = Fixture::new(&PLAN.replace("- [ ] write", "- [x] write"));
    let exec = scripted(vec![
        work(|root| std::fs::write(root.join("a"), "1").unwrap()),
        work(|root| std::fs::write(root.join("b"), "1").unwrap()),
        work(|root| std::fs::write(root.join("c"), "1").unwrap()),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert!(
        matches!(end, GoalEnd::Stopped(Stopped::Paused { .. })),
        "{end:?}"
    );
    let clean_ends = f.rules(&run).iter().filter(|r| *r == "clean_end").count();
    assert_eq!(clean_ends, 3);
    assert!(
        exec.prompt(2)
            .contains("Every subtask of `greet` is ticked")
    );
    assert_eq!(f.store().run(&run).unwrap().state.status, RunStatus::Paused);
}

#[tokio::test]
async fn the_same_failing_verify_three_times_brings_the_nudge() {
    let f = Fixture::new(PLAN);
    let fail = |n: u32| {
        work(move |root| {
            std::fs::write(root.join(format!("try{n}")), "x").unwrap();
            reject(root, "verify failed (exit 1): no hello", Some(1));
        })
    };
    let exec = scripted(vec![fail(1), fail(2), fail(3), Step::Idle]);
    let deps = f.deps(exec.clone());
    // The circuit breaker (its own tests) would ask a person at the third rejection.
    let mut spec = spec(Some(4));
    spec.rules.escalate_after_rejects = 0;
    let (run, _) = start(&deps, spec).await;
    assert!(f.rules(&run).contains(&"oscillation".to_owned()));
    assert!(
        exec.prompt(2)
            .contains("Signing off `greet` was rejected: verify failed")
    );
    assert!(!exec.prompt(3).contains("You appear stuck"));
    assert!(exec.prompt(4).contains("You appear stuck in a loop"));
}

#[tokio::test]
async fn three_judge_failures_pause_the_run() {
    let f = Fixture::new(PLAN);
    let down = |n: u32| {
        work(move |root| {
            std::fs::write(root.join(format!("t{n}")), "x").unwrap();
            reject(root, "judge unavailable: timed out after 5s", Some(0));
        })
    };
    let exec = scripted(vec![down(1), down(2), down(3)]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(Some(10))).await;
    assert!(
        matches!(end, GoalEnd::Stopped(Stopped::Paused { ref reason }) if reason.contains("judge failed 3 times")),
        "{end:?}"
    );
    assert_eq!(f.rules(&run)[0], "judge_unavailable");
}

#[tokio::test]
async fn budget_spent_then_resume_continues_with_a_fresh_budget() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![
        work(|root| std::fs::write(root.join("a"), "1").unwrap()),
        work(|root| std::fs::write(root.join("b"), "1").unwrap()),
        work(|root| sign_off(root, "greet", true)),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some(2))).await;
    assert_eq!(end, GoalEnd::Stopped(Stopped::BudgetSpent { iteration: 2 }));
    let end = goal::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert!(
        matches!(end, GoalEnd::AllDone { iteration: 3, .. }),
        "{end:?}"
    );
}

#[tokio::test]
async fn messages_are_delivered_and_a_pause_takes_effect_at_the_boundary() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![
        work(|root| {
            let store = Store::open(root.join(".tether/tether.db")).unwrap();
            let run = store.latest_run().unwrap().unwrap();
            tether_core::control::say(
                &store,
                &run,
                "use LRU",
                ("ana", tether_store::Author::Person),
            )
            .unwrap();
        }),
        work(|root| {
            let store = Store::open(root.join(".tether/tether.db")).unwrap();
            let run = store.latest_run().unwrap().unwrap();
            store
                .append(
                    Some(&run.id),
                    &Event::PauseRequested {
                        by: "ana".into(),
                        author: tether_store::Author::Person,
                    },
                )
                .unwrap();
        }),
    ]);
    let deps = f.deps(exec.clone());
    let (_, end) = start(&deps, spec(Some(10))).await;
    assert_eq!(
        end,
        GoalEnd::Stopped(Stopped::Paused {
            reason: "paused by ana".into()
        })
    );
    assert!(exec.prompt(2).contains("A message from ana: use LRU"));
    assert_eq!(exec.prompts.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn the_prompt_prefix_is_byte_identical_while_the_plan_does_not_change() {
    let f = Fixture::new(PLAN);
    let touch = |n: u32| work(move |root| std::fs::write(root.join(format!("f{n}")), "x").unwrap());
    let exec = scripted(vec![touch(1), touch(2), touch(3)]);
    let deps = f.deps(exec.clone());
    start(&deps, spec(Some(3))).await;
    let (a, b) = (exec.prompt(2), exec.prompt(3));
    let shared = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    assert!(shared * 100 >= 95 * b.len(), "{shared} of {}", b.len());
}

#[tokio::test]
async fn a_plan_without_active_goals_is_refused() {
    let f = Fixture::new(&PLAN.replace("status: active", "status: open"));
    let deps = f.deps(scripted(vec![]));
    let err = goal::start(&deps, spec(Some(3)), CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, LoopError::NoActiveGoals { .. }));
    assert_eq!(
        err.to_string(),
        "plan.md has no active goal; set `status: active` on the goals to work on (open: greet)"
    );
}
