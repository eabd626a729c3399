//! How a goal's contract reads for the person who approves it, and the few words around it
//! (its state, a short hash, a UTC time): text any front end shows (the CLI prints it before
//! asking, and after locking).

use std::fmt::Write as _;

use super::{ContractState, GoalContract};
use tether_human::visible::visible;
use tether_plan::Goal;

const LABEL: usize = 15;

fn row(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "    {label:<LABEL$}{value}");
}

/// The contract card: title, id and status, then `done_when`, `verify`, the failure modes,
/// `ask_before` and the subtasks, aligned.
pub fn contract(goal: &Goal) -> String {
    let mut out = String::new();
    let id = goal
        .id()
        .map_or_else(|| "no id".to_owned(), |i| format!("#{i}"));
    let _ = writeln!(out, "{}  ({id}, {})", goal.title, goal.status());
    let done_when = goal
        .done_when
        .as_ref()
        .map_or("(missing)", |d| d.value.as_str());
    row(&mut out, "done when:", done_when);
    let verify = goal
        .verify
        .as_ref()
        .map_or("(none: the judge alone checks done_when)", |v| {
            v.value.as_str()
        });
    row(&mut out, "verify:", verify);
    if goal.failure_modes.is_empty() {
        row(&mut out, "failure modes:", "(none)");
    }
    for (i, mode) in goal.failure_modes.iter().enumerate() {
        let label = if i == 0 { "failure modes:" } else { "" };
        row(&mut out, label, &format!("- {}", mode.value));
    }
    if !goal.ask_before.is_empty() {
        let list: Vec<&str> = goal.ask_before.iter().map(|a| a.value.as_str()).collect();
        row(&mut out, "ask before:", &list.join(", "));
    }
    for (i, sub) in goal.subtasks.iter().enumerate() {
        let label = if i == 0 { "subtasks:" } else { "" };
        let mark = if sub.checked { "[x]" } else { "[ ]" };
        row(&mut out, label, &format!("{mark} {}", sub.text));
    }
    // The agent wrote the plan: what the approver reads has no control character acting on
    // the terminal.
    visible(&out).into_owned()
}

/// The state in words: `never approved`, `changed since alice approved it on …`, `approved`.
pub fn state(state: &ContractState) -> String {
    match state {
        ContractState::Approved => "approved".to_owned(),
        ContractState::NeverApproved => "never approved".to_owned(),
        ContractState::Changed {
            approved_by,
            approved_at_ms,
        } => format!(
            "changed since {approved_by} approved it on {}",
            utc(*approved_at_ms)
        ),
    }
}

/// `sha256:` and the first 12 hex digits.
pub fn short_hash(hash: &str) -> &str {
    hash.get(..7 + 12).unwrap_or(hash)
}

/// One line per goal, `  id  sha256:…  title`, with the ids padded to the longest.
pub fn locked_lines<'a>(goals: impl IntoIterator<Item = &'a GoalContract>) -> String {
    let goals: Vec<&GoalContract> = goals.into_iter().collect();
    let width = goals
        .iter()
        .map(|g| g.id.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for g in goals {
        let _ = writeln!(
            out,
            "  {:<width$}  {}  {}",
            g.id,
            short_hash(&g.hash),
            g.title
        );
    }
    visible(&out).into_owned()
}

/// `ms` since the Unix epoch as `YYYY-MM-DD HH:MM UTC`.
pub fn utc(ms: i64) -> String {
    format!("{} UTC", tether_signoff::stamp(ms))
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(super::utc(1_781_532_120_000), "2026-06-15 14:02 UTC");
        assert_eq!(super::utc(4_107_542_399_000), "2100-02-28 23:59 UTC");
    }

    #[test]
    fn a_contract_card() {
        let text = "# Plan: p\n\n## Goal: Cache layer\n<!-- id: cache -->\nstatus: active\n\
                    done_when: p95 < 50ms\nfailure_modes:\n- bypassed\n- trivial test\n\
                    ask_before: git push, cargo publish\n\n- [x] wire\n- [ ] evict\n";
        let doc = tether_plan::PlanDoc::parse("plan.md", text);
        insta::assert_snapshot!(super::contract(&doc.plan().goals[0]), @r"
        Cache layer  (#cache, active)
            done when:     p95 < 50ms
            verify:        (none: the judge alone checks done_when)
            failure modes: - bypassed
                           - trivial test
            ask before:    git push, cargo publish
            subtasks:      [x] wire
                           [ ] evict
        ");
    }
}
