//! Dependencies between goals: `after:` names the goals that must be signed off before a goal
//! starts.
//!
//! The parser reads each `after:` line into [`Goal::after`]; this module checks the whole plan
//! once every goal is known (an id no goal has, a goal naming itself, goals waiting on each other
//! in a cycle) and answers which goals a goal waits on and which goals are ready. The checks are
//! linear in the size of the plan (plus the cycles found), so a large plan stays cheap to parse.

use std::collections::{HashMap, HashSet};

use crate::model::{Goal, Plan, Status};
use crate::problem::{Problem, ProblemKind, Severity};

impl Plan {
    /// What `goal` waits on: each id of its `after:` list, in file order, with that goal's status
    /// (`None` when no single goal has the id).
    pub fn waits_on<'a>(&self, goal: &'a Goal) -> Vec<(&'a str, Option<Status>)> {
        goal.after()
            .iter()
            .map(|id| (id.as_str(), self.goal(id).map(Goal::status)))
            .collect()
    }

    /// Whether every goal `goal` waits on is signed off (`status: done`, which only a sign-off
    /// writes). A goal without `after:` is always ready to start; one naming an id no goal has
    /// never is.
    pub fn is_ready(&self, goal: &Goal) -> bool {
        self.waits_on(goal)
            .iter()
            .all(|(_, status)| *status == Some(Status::Done))
    }

    /// The goals that are not finished and whose `after:` goals are all signed off, in file
    /// order: the ones work may start or continue on.
    pub fn ready_goals(&self) -> impl Iterator<Item = &Goal> {
        self.goals
            .iter()
            .filter(|g| !g.status().is_closed() && self.is_ready(g))
    }
}

/// The problems in the plan's `after:` lines: unknown ids, a goal naming itself, and cycles.
pub(crate) fn problems(goals: &[Goal]) -> Vec<Problem> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(goals.len());
    for (i, id) in goals
        .iter()
        .enumerate()
        .filter_map(|(i, g)| Some((i, g.id()?)))
    {
        index.entry(id).or_insert(i);
    }
    let mut out = Vec::new();
    let mut edges = vec![Vec::new(); goals.len()];
    for (i, goal) in goals.iter().enumerate() {
        let Some(after) = &goal.after else { continue };
        for id in &after.value {
            match index.get(id.as_str()) {
                None => out.push(problem(
                    ProblemKind::UnknownAfter,
                    after.line,
                    i,
                    format!("`after:` names `{id}`, which no goal has as its id"),
                )),
                Some(_) if goal.id() == Some(id.as_str()) => out.push(problem(
                    ProblemKind::SelfAfter,
                    after.line,
                    i,
                    format!(
                        "`after:` names this goal's own id `{id}`; a goal cannot wait on itself"
                    ),
                )),
                Some(&to) if !edges[i].contains(&to) => edges[i].push(to),
                Some(_) => {}
            }
        }
    }
    for cycle in cycles(&edges) {
        out.push(cycle_problem(goals, &cycle));
    }
    out
}

fn problem(kind: ProblemKind, line: usize, goal: usize, message: String) -> Problem {
    Problem {
        severity: Severity::Error,
        kind,
        line,
        goal: Some(goal),
        message,
    }
}

/// The problem for one cycle (goal indices, each waiting on the next), reported on the `after:`
/// line of its first goal in file order.
fn cycle_problem(goals: &[Goal], cycle: &[usize]) -> Problem {
    let first = cycle
        .iter()
        .enumerate()
        .min_by_key(|(_, g)| **g)
        .map_or(0, |(pos, _)| pos);
    let ordered: Vec<usize> = cycle[first..]
        .iter()
        .chain(&cycle[..first])
        .copied()
        .collect();
    let name = |g: &usize| format!("`{}`", goals[*g].id().unwrap_or_default());
    let mut path: Vec<String> = ordered.iter().map(name).collect();
    path.push(path[0].clone());
    let head = ordered[0];
    let line = goals[head]
        .after
        .as_ref()
        .map_or(goals[head].heading_line, |l| l.line);
    problem(
        ProblemKind::AfterCycle,
        line,
        head,
        format!(
            "goals {} wait on each other in a cycle ({}, each waiting on the next), so none of \
             them can start; remove one of these `after:` entries",
            ordered.iter().map(name).collect::<Vec<_>>().join(", "),
            path.join(" → ")
        ),
    )
}

/// The cycles in the graph `edges` (goal index → the goals it waits on): at least one for every
/// group of goals that wait on each other, each listed once. Depth-first, without recursion, so a
/// long chain of goals cannot overflow the stack.
fn cycles(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; edges.len()];
    let mut found = Vec::new();
    let mut seen: HashSet<Vec<usize>> = HashSet::new();
    for start in 0..edges.len() {
        if mark[start] != Mark::New {
            continue;
        }
        mark[start] = Mark::OnPath;
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some(top) = path.last_mut() {
            let (node, next) = *top;
            top.1 += 1;
            let Some(&to) = edges[node].get(next) else {
                mark[node] = Mark::Done;
                path.pop();
                continue;
            };
            match mark[to] {
                Mark::New => {
                    mark[to] = Mark::OnPath;
                    path.push((to, 0));
                }
                Mark::OnPath => {
                    let from = path.iter().position(|(n, _)| *n == to).unwrap_or(0);
                    let cycle: Vec<usize> = path[from..].iter().map(|(n, _)| *n).collect();
                    let mut key = cycle.clone();
                    key.sort_unstable();
                    if seen.insert(key) {
                        found.push(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crate::{PlanDoc, ProblemKind, Status};

    fn goal(id: &str, status: &str, after: Option<&str>) -> String {
        let after = after.map_or_else(String::new, |a| format!("after: {a}\n"));
        format!("## Goal: {id}\n<!-- id: {id} -->\nstatus: {status}\n{after}done_when: x\n\n")
    }

    fn parse(goals: &[String]) -> PlanDoc {
        PlanDoc::parse("plan.md", format!("# Plan: p\n\n{}", goals.concat()))
    }

    fn kinds(doc: &PlanDoc) -> Vec<(ProblemKind, usize)> {
        doc.plan()
            .problems
            .iter()
            .map(|p| (p.kind, p.line))
            .collect()
    }

    #[test]
    fn after_reads_comma_separated_ids_with_whitespace() {
        let doc = parse(&[
            goal("a", "done", None),
            goal("b", "open", None),
            goal("c", "open", Some(" a ,b,  ")),
        ]);
        assert_eq!(kinds(&doc), []);
        let c = &doc.plan().goals[2];
        assert_eq!(c.after(), ["a", "b"]);
        assert_eq!(c.after.as_ref().unwrap().line, 16);
        assert_eq!(doc.plan().goals[0].after(), [] as [&str; 0]);
    }

    #[test]
    fn an_empty_after_is_an_error_on_its_line() {
        for value in ["", " , ,"] {
            let doc = parse(&[goal("a", "open", Some(value))]);
            assert_eq!(kinds(&doc), [(ProblemKind::EmptyField, 6)], "{value:?}");
            assert!(doc.plan().problems[0].message.contains("`after:`"));
            assert!(doc.plan().goals[0].after.is_none());
        }
    }

    #[test]
    fn a_second_after_is_a_duplicate_field() {
        let text = goal("a", "open", Some("b")).replace("done_when", "after: c\ndone_when");
        let doc = parse(&[text, goal("b", "open", None), goal("c", "open", None)]);
        assert_eq!(kinds(&doc), [(ProblemKind::DuplicateField, 7)]);
    }

    #[test]
    fn unknown_ids_self_and_cycles_are_errors() {
        let doc = parse(&[
            goal("a", "open", Some("nope, a")),
            goal("b", "open", Some("c")),
            goal("c", "open", Some("b")),
        ]);
        assert_eq!(
            kinds(&doc),
            [
                (ProblemKind::UnknownAfter, 6),
                (ProblemKind::SelfAfter, 6),
                (ProblemKind::AfterCycle, 12),
            ]
        );
        assert!(doc.plan().has_errors());
    }

    #[test]
    fn a_cycle_is_reported_once_from_its_first_goal() {
        let doc = parse(&[
            goal("x", "open", Some("z")),
            goal("y", "open", Some("x")),
            goal("z", "open", Some("y, x")),
        ]);
        let cycles: Vec<_> = doc
            .plan()
            .problems
            .iter()
            .filter(|p| p.kind == ProblemKind::AfterCycle)
            .collect();
        assert_eq!(cycles.len(), 2, "{cycles:?}"); // x→z→x and x→z→y→x
        assert_eq!(cycles[0].line, 6);
        assert!(
            cycles
                .iter()
                .all(|p| p.message.starts_with("goals `x`, `z`"))
        );
    }

    #[test]
    fn a_long_chain_is_not_a_cycle_and_does_not_overflow() {
        let goals: Vec<String> = (0..5000)
            .map(|i| {
                let after = (i > 0).then(|| format!("g{}", i - 1));
                goal(&format!("g{i}"), "open", after.as_deref())
            })
            .collect();
        assert_eq!(kinds(&parse(&goals)), []);
    }

    #[test]
    fn ready_goals_wait_for_sign_off() {
        let doc = parse(&[
            goal("a", "done", None),
            goal("b", "active", None),
            goal("c", "open", Some("a")),
            goal("d", "open", Some("a, b")),
            goal("e", "done", Some("b")),
        ]);
        let plan = doc.plan();
        let ready: Vec<_> = plan.ready_goals().filter_map(|g| g.id()).collect();
        assert_eq!(ready, ["b", "c"]);
        assert_eq!(
            plan.waits_on(&plan.goals[3]),
            [("a", Some(Status::Done)), ("b", Some(Status::Active))]
        );
    }

    #[test]
    fn a_goal_naming_a_missing_id_is_never_ready() {
        let doc = parse(&[goal("a", "open", Some("gone"))]);
        let plan = doc.plan();
        assert_eq!(plan.waits_on(&plan.goals[0]), [("gone", None)]);
        assert!(!plan.is_ready(&plan.goals[0]));
    }

    #[test]
    fn later_is_prose_but_a_misspelt_after_is_caught() {
        let doc = parse(&[goal("a", "open", None).replace("done_when", "Later: more\ndone_when")]);
        assert_eq!(kinds(&doc), []);
        let doc = parse(&[goal("a", "open", None).replace("done_when", "afer: b\ndone_when")]);
        assert_eq!(kinds(&doc), [(ProblemKind::UnknownField, 6)]);
    }
}
