#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tether_plan::PlanDoc;

use super::*;

const SETTINGS: RuleSettings = RuleSettings {
    spin_guard: 2,
    oscillation_repeats: 3,
    reminder_after: 3,
    clean_end_reminders: 2,
    judge_failures: 3,
    asking_allowed: true,
};

fn plan(subtasks: &str) -> Plan {
    let text = format!(
        "# Plan: p\n\n## Goal: G\n<!-- id: g -->\nstatus: active\ndone_when: x\nverify: make test\n\n{subtasks}\n"
    );
    PlanDoc::parse("plan.md", text).plan().clone()
}

fn obs<'a>(plan: &'a Plan, attempts: &'a [Attempt]) -> Observation<'a> {
    Observation {
        tool_calls: 1,
        files_changed: true,
        plan_changed: true,
        attempts,
        plan,
    }
}

fn rules_fired(d: &Decision) -> Vec<&'static str> {
    d.fired.iter().map(|(r, _)| r.as_str()).collect()
}

fn failed_verify(hash: u64) -> Attempt {
    Attempt {
        goal: "g".into(),
        kind: VerdictKind::VerifyFailed,
        failed_verify: Some(hash),
        reason: "verify failed (exit 1)".into(),
        missing: vec![],
    }
}

fn judge_down() -> Attempt {
    Attempt {
        goal: "g".into(),
        kind: VerdictKind::JudgeUnavailable,
        failed_verify: None,
        reason: "judge unavailable: timed out".into(),
        missing: vec![],
    }
}

#[test]
fn two_idle_iterations_in_a_row_block_the_run() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(SETTINGS);
    let idle = Observation {
        tool_calls: 0,
        files_changed: false,
        plan_changed: false,
        ..obs(&p, &[])
    };
    assert_eq!(rules.after_iteration(&idle).stop, None);
    // Work in between resets the count.
    assert_eq!(rules.after_iteration(&obs(&p, &[])).stop, None);
    assert_eq!(rules.after_iteration(&idle).stop, None);
    let d = rules.after_iteration(&idle);
    assert!(matches!(
        d.stop,
        Some(Stop::Blocked {
            rule: Rule::SpinGuard,
            ..
        })
    ));
    assert_eq!(rules_fired(&d), ["spin_guard"]);
}

#[test]
fn a_tool_call_alone_is_not_a_spin() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(SETTINGS);
    let reading = Observation {
        tool_calls: 3,
        files_changed: false,
        plan_changed: false,
        ..obs(&p, &[])
    };
    for _ in 0..5 {
        assert_eq!(rules.after_iteration(&reading).stop, None);
    }
}

#[test]
fn the_reminder_fires_after_three_edits_that_left_the_plan_alone() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(SETTINGS);
    let edit = Observation {
        plan_changed: false,
        ..obs(&p, &[])
    };
    assert!(rules.after_iteration(&edit).feedback.is_empty());
    assert!(rules.after_iteration(&edit).feedback.is_empty());
    let d = rules.after_iteration(&edit);
    assert_eq!(d.feedback, [Feedback::Reminder]);
    assert_eq!(rules_fired(&d), ["reminder"]);
    // The count starts again, and updating the plan resets it.
    assert!(rules.after_iteration(&edit).feedback.is_empty());
    assert!(rules.after_iteration(&obs(&p, &[])).feedback.is_empty());
    assert!(rules.after_iteration(&edit).feedback.is_empty());
    assert!(rules.after_iteration(&edit).feedback.is_empty());
}

#[test]
fn the_same_failing_verify_three_times_nudges_towards_asking() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(SETTINGS);
    let same = [failed_verify(7)];
    let d1 = rules.after_iteration(&obs(&p, &same));
    assert!(!d1.feedback.contains(&Feedback::Oscillation));
    assert!(matches!(d1.feedback[0], Feedback::Rejected { .. }));
    // A different output restarts the count.
    rules.after_iteration(&obs(&p, &[failed_verify(8)]));
    rules.after_iteration(&obs(&p, &same));
    rules.after_iteration(&obs(&p, &same));
    let d = rules.after_iteration(&obs(&p, &same));
    assert!(d.feedback.contains(&Feedback::Oscillation));
    assert_eq!(rules_fired(&d), ["oscillation"]);
}

#[test]
fn the_nudge_is_not_given_when_asking_is_not_allowed() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(RuleSettings {
        asking_allowed: false,
        ..SETTINGS
    });
    let three = [failed_verify(1), failed_verify(1), failed_verify(1)];
    let d = rules.after_iteration(&obs(&p, &three));
    assert_eq!(rules_fired(&d), ["oscillation"]);
    assert!(!d.feedback.contains(&Feedback::Oscillation));
}

#[test]
fn three_judge_failures_in_a_row_pause_the_run() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(SETTINGS);
    rules.after_iteration(&obs(&p, &[judge_down(), judge_down()]));
    let judged = Attempt {
        kind: VerdictKind::JudgeRejected,
        reason: "the test asserts nothing".into(),
        ..judge_down()
    };
    // A real verdict in between resets the count.
    assert_eq!(rules.after_iteration(&obs(&p, &[judged])).stop, None);
    rules.after_iteration(&obs(&p, &[judge_down()]));
    rules.after_iteration(&obs(&p, &[judge_down()]));
    let d = rules.after_iteration(&obs(&p, &[judge_down()]));
    match d.stop {
        Some(Stop::Paused { rule, reason }) => {
            assert_eq!(rule.as_str(), "judge_unavailable");
            assert!(reason.contains("judge unavailable: timed out"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn clean_end_reminds_twice_then_pauses() {
    let ticked = plan("- [x] a\n- [x] b");
    let mut rules = Rules::new(SETTINGS);
    for n in 1..=2 {
        let d = rules.after_iteration(&obs(&ticked, &[]));
        assert_eq!(
            d.feedback,
            [Feedback::CleanEnd {
                goal: "g".into(),
                verify: Some("make test".into())
            }],
            "reminder {n}"
        );
        assert_eq!(d.stop, None);
    }
    let d = rules.after_iteration(&obs(&ticked, &[]));
    assert!(matches!(
        d.stop,
        Some(Stop::Paused {
            rule: Rule::CleanEnd,
            ..
        })
    ));
}

#[test]
fn clean_end_counts_again_once_work_reopens() {
    let ticked = plan("- [x] a");
    let open = plan("- [x] a\n- [ ] residual");
    let mut rules = Rules::new(SETTINGS);
    rules.after_iteration(&obs(&ticked, &[]));
    rules.after_iteration(&obs(&ticked, &[]));
    assert!(rules.after_iteration(&obs(&open, &[])).feedback.is_empty());
    let d = rules.after_iteration(&obs(&ticked, &[]));
    assert_eq!(d.stop, None);
    assert_eq!(d.feedback.len(), 1);
}

#[test]
fn a_goal_without_subtasks_gets_no_clean_end_reminder() {
    let none = plan("");
    let mut rules = Rules::new(SETTINGS);
    for _ in 0..4 {
        assert_eq!(rules.after_iteration(&obs(&none, &[])), Decision::default());
    }
}
