//! The task list `tether plan` prints: each goal with its status, open subtasks, a count of the
//! ticked ones it hides, what it waits on (`after:`), and flags for what needs a human's
//! attention.
//!
//! Flags that need only the file (no `done_when`, duplicate ids, invalid status or threshold…)
//! come from the parse; flags that need the store (done without sign-off, contract changed since
//! approval) are passed in by the caller as [`Flag`]s, and milder notes (a contract not approved
//! yet) as notes.

use std::fmt::Write as _;

use crate::model::{Goal, Plan, Status};
use crate::problem::{Problem, Severity};

/// A flag on one goal, supplied by the caller (for example from the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// The index of the goal in `Plan::goals`.
    pub goal: usize,
    /// What needs attention.
    pub message: String,
}

/// What to render besides the plan itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Extra flags, shown under their goals after the parse's own (marked `⚠`).
    pub flags: Vec<Flag>,
    /// Milder notes, shown under their goals after the flags (marked `·`).
    pub notes: Vec<Flag>,
    /// How many of the last log entries to show.
    pub log_lines: usize,
}

const INDENT: &str = "            ";

/// Renders the task list for `plan`, read from `file` (shown in the header).
pub fn task_list(file: &str, plan: &Plan, opts: &Options) -> String {
    let mut out = String::new();
    match &plan.title {
        Some(t) if !t.value.is_empty() => {
            let _ = writeln!(out, "Plan: {}", t.value);
        }
        _ => {
            let _ = writeln!(out, "Plan (untitled)");
        }
    }
    let _ = writeln!(out, "{file} · {}", counts(plan));
    if plan.goals.is_empty() {
        let _ = writeln!(
            out,
            "\nNo goals yet. Add a `## Goal: <title>` section to {file}, or draft goals with \
             `tether plan new \"<objective>\"`."
        );
    }
    let attached = Attached::group(plan, opts);
    for i in 0..plan.goals.len() {
        out.push('\n');
        render_goal(&mut out, plan, i, &attached);
    }
    let loose: Vec<&Problem> = plan.problems.iter().filter(|p| p.goal.is_none()).collect();
    if !loose.is_empty() {
        out.push_str("\nOther problems:\n");
        for p in loose {
            let _ = writeln!(out, "  {} line {}: {}", mark(p.severity), p.line, p.message);
        }
    }
    if let Some(log) = &plan.log
        && opts.log_lines > 0
        && !log.entries.is_empty()
    {
        let n = log.entries.len();
        let shown = opts.log_lines.min(n);
        if shown == n {
            let _ = writeln!(out, "\nLog:");
        } else {
            let _ = writeln!(out, "\nLog (last {shown} of {n}):");
        }
        for e in &log.entries[n - shown..] {
            let _ = writeln!(out, "  - {}", e.text);
        }
    }
    out
}

fn counts(plan: &Plan) -> String {
    let total = plan.goals.len();
    let mut parts = vec![format!("{total} goal{}", if total == 1 { "" } else { "s" })];
    let by: Vec<String> = Status::ALL
        .iter()
        .map(|s| (s, plan.goals.iter().filter(|g| g.status() == *s).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {s}"))
        .collect();
    if !by.is_empty() {
        parts.push(by.join(", "));
    }
    parts.join(": ")
}

fn mark(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✗",
        Severity::Warning => "⚠",
    }
}

/// What is shown under each goal, grouped by goal index in one pass, so rendering stays linear
/// in the size of the plan (a plan with many goals and many problems must not be quadratic).
struct Attached<'a> {
    problems: Vec<Vec<&'a Problem>>,
    flags: Vec<Vec<&'a str>>,
    notes: Vec<Vec<&'a str>>,
}

impl<'a> Attached<'a> {
    fn group(plan: &'a Plan, opts: &'a Options) -> Self {
        let n = plan.goals.len();
        let mut a = Attached {
            problems: vec![Vec::new(); n],
            flags: vec![Vec::new(); n],
            notes: vec![Vec::new(); n],
        };
        for p in &plan.problems {
            if let Some(slot) = p.goal.and_then(|g| a.problems.get_mut(g)) {
                slot.push(p);
            }
        }
        for f in &opts.flags {
            if let Some(slot) = a.flags.get_mut(f.goal) {
                slot.push(&f.message);
            }
        }
        for f in &opts.notes {
            if let Some(slot) = a.notes.get_mut(f.goal) {
                slot.push(&f.message);
            }
        }
        a
    }
}

/// The `waits on:` line of a goal with `after:`: each goal it waits on, with its status.
fn render_waits(out: &mut String, plan: &Plan, goal: &Goal) {
    let waits = plan.waits_on(goal);
    if waits.is_empty() {
        return;
    }
    let list: Vec<String> = waits
        .iter()
        .map(|(id, status)| match status {
            Some(s) => format!("{id} ({s})"),
            None => format!("{id} (no such goal)"),
        })
        .collect();
    let _ = writeln!(out, "{INDENT}waits on:  {}", list.join(", "));
}

fn render_goal(out: &mut String, plan: &Plan, index: usize, attached: &Attached<'_>) {
    let goal = &plan.goals[index];
    let status = match &goal.status {
        Some(f) if f.value.is_none() => "invalid".to_owned(),
        _ => goal.status().to_string(),
    };
    let id = goal
        .id()
        .map_or_else(|| "no id".to_owned(), |i| format!("#{i}"));
    let title = if goal.title.is_empty() {
        "(untitled)"
    } else {
        &goal.title
    };
    let _ = writeln!(out, "{status:<10}  {title}  ({id})");
    let closed =
        goal.status().is_closed() && goal.status.as_ref().is_some_and(|f| f.value.is_some());
    if closed {
        if !goal.subtasks.is_empty() {
            let _ = writeln!(
                out,
                "{INDENT}{}/{} subtasks ticked",
                goal.done_subtasks(),
                goal.subtasks.len()
            );
        }
    } else {
        if let Some(d) = &goal.done_when {
            let _ = writeln!(out, "{INDENT}done when: {}", d.value);
        }
        if let Some(v) = &goal.verify {
            let _ = writeln!(out, "{INDENT}verify:    {}", v.value);
        }
        render_waits(out, plan, goal);
        for s in goal.subtasks.iter().filter(|s| !s.checked) {
            let _ = writeln!(out, "{INDENT}[ ] {}", s.text);
        }
        let hidden = goal.done_subtasks();
        if hidden > 0 {
            let _ = writeln!(out, "{INDENT}({hidden} done hidden)");
        }
    }
    for p in &attached.problems[index] {
        let _ = writeln!(
            out,
            "{INDENT}{} line {}: {}",
            mark(p.severity),
            p.line,
            p.message
        );
    }
    for message in &attached.flags[index] {
        let _ = writeln!(out, "{INDENT}⚠ {message}");
    }
    for message in &attached.notes[index] {
        let _ = writeln!(out, "{INDENT}· {message}");
    }
}
