#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tether_plan::PlanDoc;

use super::*;

/// The defaults, without the circuit breaker (it has its own tests, with the default of 3).
const SETTINGS: RuleSettings = RuleSettings::DEFAULT.without_breaker();

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
        unchanged: false,
    }
}

fn judge_down() -> Attempt {
    Attempt {
        goal: "g".into(),
        kind: VerdictKind::JudgeUnavailable,
        failed_verify: None,
        reason: "judge unavailable: timed out".into(),
        missing: vec![],
        unchanged: false,
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

fn rejected(missing: &[&str]) -> Attempt {
    Attempt {
        kind: VerdictKind::JudgeRejected,
        reason: "the test asserts nothing".into(),
        missing: missing.iter().map(|m| (*m).to_owned()).collect(),
        ..judge_down()
    }
}

fn unchanged() -> Attempt {
    Attempt {
        reason: "nothing changed since attempt 1, which was rejected".into(),
        unchanged: true,
        ..rejected(&[])
    }
}

const BREAKER: RuleSettings = RuleSettings {
    escalate_after_rejects: 3,
    ..SETTINGS
};

#[test]
fn three_rejects_in_a_row_escalate_with_every_missing_item_once() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(BREAKER);
    assert_eq!(
        rules
            .after_iteration(&obs(&p, &[rejected(&["a test"])]))
            .escalate,
        None
    );
    // A failed judge judged nothing: it neither counts nor resets.
    rules.after_iteration(&obs(&p, &[judge_down()]));
    assert_eq!(
        rules
            .after_iteration(&obs(&p, &[failed_verify(1)]))
            .escalate,
        None
    );
    let d = rules.after_iteration(&obs(&p, &[rejected(&["a test", "the docs"])]));
    assert_eq!(rules_fired(&d), ["circuit_breaker"]);
    let e = d.escalate.expect("escalated");
    assert_eq!((e.goal.as_str(), e.rejects), ("g", 3));
    assert_eq!(e.missing, ["a test", "the docs"]);
    // The count starts again.
    assert_eq!(
        rules.after_iteration(&obs(&p, &[rejected(&[])])).escalate,
        None
    );
}

#[test]
fn an_accept_resets_the_breaker_and_zero_turns_it_off() {
    let p = plan("- [ ] a");
    let mut rules = Rules::new(BREAKER);
    rules.after_iteration(&obs(&p, &[rejected(&[])]));
    rules.after_iteration(&obs(&p, &[rejected(&[])]));
    let accepted = Attempt {
        kind: VerdictKind::Accepted,
        ..rejected(&[])
    };
    rules.after_iteration(&obs(&p, &[accepted]));
    assert_eq!(
        rules.after_iteration(&obs(&p, &[rejected(&[])])).escalate,
        None
    );
    let mut off = Rules::new(SETTINGS);
    for _ in 0..10 {
        assert_eq!(
            off.after_iteration(&obs(&p, &[rejected(&[])])).escalate,
            None
        );
    }
}

#[test]
fn re_asking_on_an_unchanged_tree_counts_as_a_reject_and_as_idle() {
    let p = plan("- [ ] a");
    let idle = Observation {
        files_changed: false,
        plan_changed: false,
        ..obs(&p, &[])
    };
    let unchanged = [unchanged()];
    let idle_unchanged = Observation {
        attempts: &unchanged,
        ..idle
    };
    // Without the breaker, the spin guard blocks the second idle re-ask.
    let mut spin_only = Rules::new(SETTINGS);
    spin_only.after_iteration(&obs(&p, &[rejected(&[])]));
    assert_eq!(spin_only.after_iteration(&idle_unchanged).stop, None);
    let d = spin_only.after_iteration(&idle_unchanged);
    assert!(matches!(d.stop, Some(Stop::Blocked { .. })), "{d:?}");
    // With it, the third rejection in a row asks the person instead.
    let mut rules = Rules::new(BREAKER);
    rules.after_iteration(&obs(&p, &[rejected(&[])]));
    rules.after_iteration(&idle_unchanged);
    let d = rules.after_iteration(&idle_unchanged);
    assert!(d.escalate.is_some() && d.stop.is_none(), "{d:?}");
}

#[test]
fn a_goal_the_judge_rules_impossible_or_blocked_pauses_the_run_at_once_with_its_reason() {
    let p = plan("- [ ] a");
    for kind in [VerdictKind::JudgeImpossible, VerdictKind::JudgeBlocked] {
        // Under the breaker's default: one ruling is enough.
        let mut rules = Rules::new(RuleSettings::DEFAULT);
        let ruled = Attempt {
            kind,
            reason: "the judge ruled the goal blocked: it needs the production key".into(),
            ..judge_down()
        };
        let d = rules.after_iteration(&obs(&p, &[ruled]));
        assert_eq!(rules_fired(&d), ["judge_ruled_out"]);
        assert_eq!(d.escalate, None, "no circuit breaker question besides");
        match d.stop {
            Some(Stop::Paused { rule, reason }) => {
                assert_eq!(rule, Rule::JudgeRuledOut);
                assert_eq!(
                    reason,
                    "`g`: the judge ruled the goal blocked: it needs the production key"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
