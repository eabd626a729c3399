use std::collections::BTreeSet;

use proptest::prelude::*;

use super::{Finish, Phase, Schedule, Step};

fn goals(spec: &[(&str, &[&str])]) -> Vec<(String, Vec<String>, bool)> {
    spec.iter()
        .map(|(id, after)| {
            (
                (*id).to_owned(),
                after.iter().map(|a| (*a).to_owned()).collect(),
                false,
            )
        })
        .collect()
}

fn start(goal: &str) -> Step {
    Step::Start(goal.to_owned())
}

fn merge(goal: &str) -> Step {
    Step::Merge(goal.to_owned())
}

#[test]
fn a_diamond_starts_each_goal_once_its_goals_are_merged() {
    // base → (left, right) → top, and a goal of its own.
    let mut s = Schedule::new(
        goals(&[
            ("base", &[]),
            ("left", &["base"]),
            ("right", &["base"]),
            ("top", &["left", "right"]),
            ("alone", &[]),
        ]),
        2,
        2,
    );
    assert_eq!(s.steps(), [start("base"), start("alone")]);
    assert_eq!(s.waits_on("top"), ["left", "right"]);
    s.signed_off("base");
    // Signed off is not merged: left and right wait for the merge.
    assert_eq!(s.steps(), [merge("base")]);
    s.merged("base");
    assert_eq!(s.steps(), [start("left")], "one place: alone still works");
    s.signed_off("alone");
    assert_eq!(s.steps(), [merge("alone"), start("right")]);
    s.signed_off("left");
    assert_eq!(s.steps(), [], "one merge at a time");
    s.merged("alone");
    assert_eq!(s.steps(), [merge("left")]);
    s.merged("left");
    assert_eq!(s.waits_on("top"), ["right"]);
    s.signed_off("right");
    assert_eq!(s.steps(), [merge("right")]);
    s.merged("right");
    assert_eq!(s.finish(), None);
    assert_eq!(s.steps(), [start("top")]);
    s.signed_off("top");
    assert_eq!(s.steps(), [merge("top")]);
    s.merged("top");
    assert_eq!(s.steps(), []);
    assert_eq!(s.finish(), Some(Finish::AllMerged));
}

#[test]
fn a_conflict_is_settled_by_the_agent_then_a_person_is_asked() {
    let mut s = Schedule::new(goals(&[("a", &[]), ("b", &[])]), 2, 2);
    assert_eq!(s.steps(), [start("a"), start("b")]);
    s.signed_off("a");
    s.signed_off("b");
    assert_eq!(s.steps(), [merge("a")]);
    s.merged("a");
    assert_eq!(s.steps(), [merge("b")]);
    assert_eq!(s.conflicted("b"), None);
    assert_eq!(s.phase("b"), Some(&Phase::Conflicted));
    assert_eq!(
        s.steps(),
        [Step::Settle {
            goal: "b".into(),
            attempt: 1
        }]
    );
    assert_eq!(s.phase("b"), Some(&Phase::Working { settling: true }));
    s.signed_off("b");
    assert_eq!(s.steps(), [merge("b")]);
    assert_eq!(s.conflicted("b"), Some(Step::AskPerson("b".into())));
    assert_eq!(
        s.finish(),
        Some(Finish::Stuck {
            ended: vec!["b".into()],
            waiting: vec![]
        })
    );
    // A person merged it by hand, or lets it try again.
    s.retry("b");
    assert_eq!(s.steps(), [merge("b")]);
    s.merged("b");
    assert_eq!(s.finish(), Some(Finish::AllMerged));
}

#[test]
fn a_goal_that_ended_leaves_the_goals_after_it_stuck_and_the_rest_go_on() {
    let mut s = Schedule::new(
        goals(&[("a", &[]), ("b", &["a"]), ("c", &["b"]), ("d", &[])]),
        4,
        2,
    );
    assert_eq!(s.steps(), [start("a"), start("d")]);
    s.ended("a");
    assert_eq!(s.finish(), None, "d still works");
    s.signed_off("d");
    assert_eq!(s.steps(), [merge("d")]);
    s.merged("d");
    assert_eq!(
        s.finish(),
        Some(Finish::Stuck {
            ended: vec!["a".into()],
            waiting: vec!["b".into(), "c".into()]
        })
    );
}

#[test]
fn done_goals_and_ids_outside_the_run_count_as_merged() {
    let mut s = Schedule::new(
        vec![
            ("old".into(), vec![], true),
            ("new".into(), vec!["old".into(), "elsewhere".into()], false),
        ],
        1,
        1,
    );
    assert_eq!(s.steps(), [start("new")]);
}

/// A goal of a generated plan: the goals before it that it waits on, whether its agent signs
/// it off, and how many of its merges conflict.
type Goal = (Vec<usize>, bool, u32);

/// A plan of [`Goal`]s, how many work at once, the merge attempts, and the order goals finish.
fn plans() -> impl Strategy<Value = (Vec<Goal>, usize, u32, Vec<usize>)> {
    (1usize..9, 1usize..5, 1u32..4).prop_flat_map(|(n, parallel, attempts)| {
        let goal = |i: usize| {
            (
                proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(3)),
                proptest::bool::weighted(0.85),
                0u32..4,
            )
        };
        let goals: Vec<_> = (0..n).map(goal).collect();
        (
            goals,
            Just(parallel),
            Just(attempts),
            proptest::collection::vec(0usize..16, 64),
        )
    })
}

proptest! {
    /// Whatever the plan, the outcomes and the order goals finish in: no goal starts before
    /// its goals are merged, no more than `parallel` work at once, one merge at a time, every
    /// goal starts once, and the run always comes to an end that says which goals are stuck.
    #[test]
    fn the_schedule_keeps_its_rules((plan, parallel, attempts, picks) in plans()) {
        let name = |i: usize| format!("g{i}");
        let mut s = Schedule::new(
            plan.iter().enumerate().map(|(i, (after, _, _))| {
                (name(i), after.iter().map(|a| name(*a)).collect(), false)
            }),
            parallel,
            attempts,
        );
        let mut merged: BTreeSet<String> = BTreeSet::new();
        let mut started: BTreeSet<String> = BTreeSet::new();
        let mut working: Vec<String> = Vec::new();
        let mut merging: Option<String> = None;
        let mut conflicts = vec![0u32; plan.len()];
        let mut picks = picks.into_iter().cycle();
        for _ in 0..500 {
            for step in s.steps() {
                match step {
                    Step::Start(goal) => {
                        let i: usize = goal[1..].parse().unwrap();
                        for after in &plan[i].0 {
                            prop_assert!(merged.contains(&name(*after)), "{goal} before {after}");
                        }
                        prop_assert!(started.insert(goal.clone()), "{goal} started twice");
                        working.push(goal);
                    }
                    Step::Merge(goal) => {
                        prop_assert!(merging.is_none(), "two merges at once");
                        merging = Some(goal);
                    }
                    Step::Settle { goal, .. } => working.push(goal),
                    other => prop_assert!(false, "unexpected {other:?}"),
                }
            }
            prop_assert!(s.working() <= parallel.max(1));
            prop_assert_eq!(s.working(), working.len());
            // Something finishes: a merge, or a working goal.
            if let Some(goal) = merging.take() {
                let i: usize = goal[1..].parse().unwrap();
                if conflicts[i] < plan[i].2 {
                    conflicts[i] += 1;
                    match s.conflicted(&goal) {
                        None | Some(Step::AskPerson(_)) => {}
                        other => prop_assert!(false, "unexpected {other:?}"),
                    }
                } else {
                    s.merged(&goal);
                    merged.insert(goal);
                }
            } else if !working.is_empty() {
                let goal = working.remove(picks.next().unwrap() % working.len());
                let i: usize = goal[1..].parse().unwrap();
                if plan[i].1 { s.signed_off(&goal) } else { s.ended(&goal) }
            } else {
                break;
            }
        }
        let finish = s.finish();
        prop_assert!(finish.is_some(), "the run never came to an end");
        let all_good = plan.iter().all(|(_, signs, c)| *signs && *c < attempts);
        prop_assert_eq!(finish == Some(Finish::AllMerged), all_good, "{:?}", finish);
    }
}
