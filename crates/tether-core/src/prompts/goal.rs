//! The goal loop's prompt, in the order it is assembled each iteration: the framing, the plan
//! injection (the active goals, or in a scoped run the goals of its scope alone:
//! [`Injected`]), the asking guidance, then the feedback owed (messages, answers, sign-off
//! results, reminders, the continuation line; rendered by [`super::feedback`]).
//!
//! Everything before the feedback is a pure function of the plan and the run's settings, so
//! while the plan does not change the prompt's long prefix is byte-identical from one iteration
//! to the next and provider prompt caches keep hitting. Feedback goes last for the same reason.
//!
//! A run whose iterations continue the agent's session (`[loop] context = "continue"`) frames
//! its whole prompt so ([`framing_continuing`]), and a turn that does continue gets only the
//! [`continuation`]: the plan as it stands and the feedback owed, after the conversation that
//! already holds the framing.

use std::fmt::Write as _;

use tether_plan::{Goal, Plan};

use super::feedback::{Feedback, feedback};
use tether_human::prompts::threshold_guidance;

/// How many of the plan's last log lines the injection carries.
pub const INJECTED_LOG_LINES: usize = 5;

/// The fixed framing at the top of every goal-loop prompt.
pub fn framing(plan_file: &str) -> String {
    format!(
        "You are working toward the goals in the plan file `{plan_file}` of this repository. \
         You work in a loop: each iteration you get this prompt in a fresh context, so the \
         repository, the plan and its log are your memory. Look there first.\n\n\
         Each iteration:\n\
         - Pick the most useful next step toward an active goal and do it.\n\
         - Keep the plan current with your edit tool: tick the subtasks you finished (`- [x]`), \
         add the ones you discover (`- [ ]`), and append one short line to `## Log` (append, \
         never rewrite).\n\
         - When a goal's done_when holds, call `complete_goal` with its id, your evidence (the \
         commands you ran and what they printed) and the paths that show it. Never write \
         `status: done` yourself: only complete_goal signs a goal off, after the goal's verify \
         command passes and an independent judge, reading the repository, agrees. If you have no \
         complete_goal tool, run `tether goal complete <id> --evidence \"…\" --path <file>` in \
         the shell.\n\
         - If a goal turns out to be wrong or impossible, call `cancel_goal` with the reason; \
         the run then pauses for a person to confirm it. Never change a goal's status by hand.\n\
         - Do not edit a goal's contract (done_when, verify, failure_modes, ask_before, budget, \
         network): a changed contract needs a human's approval before the goal can be signed \
         off, and until then its approved terms hold.\n\
         End your turn with a short summary: what you did, and what comes next."
    )
}

/// The framing of a run whose iterations continue the agent's session: the same work, with what
/// carries over said truly.
pub fn framing_continuing(plan_file: &str) -> String {
    framing(plan_file).replacen(
        "You work in a loop: each iteration you get this prompt in a fresh context, so the \
         repository, the plan and its log are your memory. Look there first.",
        "You work in a loop of iterations in one conversation: after this prompt, each \
         iteration brings you the plan as it stands and what happened since. The conversation \
         may start over at any time, though, with this prompt in a fresh context: the \
         repository, the plan and its log are your memory, so keep them current and look there \
         first.",
        1,
    )
}

/// The plan as a prompt injects it.
#[derive(Debug, Clone, Copy)]
pub struct Injected<'a> {
    /// The plan file, relative to the workspace root.
    pub file: &'a str,
    /// The plan; a scoped run's holds the goals of its scope alone.
    pub plan: &'a Plan,
    /// Whether the run works on chosen goals of the plan alone: the injection then says the
    /// others are not the agent's work, without naming them.
    pub scoped: bool,
}

impl<'a> Injected<'a> {
    /// The whole plan `plan` of `file`, for a run over every active goal.
    pub fn whole(file: &'a str, plan: &'a Plan) -> Self {
        Injected {
            file,
            plan,
            scoped: false,
        }
    }
}

/// The plan injection: a fixed-shape summary of the active goals (contract, open subtasks) and
/// the last log lines. Byte-identical for an unchanged plan. A scoped run's names the goals of
/// its scope alone, and says the plan's others are not the agent's work.
pub fn plan_injection(injected: Injected<'_>) -> String {
    let Injected { file, plan, scoped } = injected;
    let mut out = format!("<plan file=\"{file}\">\n");
    if let Some(title) = &plan.title {
        let _ = writeln!(out, "Plan: {}", title.value);
    }
    let active: Vec<&Goal> = plan.active_goals().collect();
    if scoped {
        let _ = writeln!(
            out,
            "Goals of this run: {}. Work on these alone: the plan's other goals are not this \
             run's work; do not work on them, sign them off or cancel them.",
            active.len()
        );
    } else {
        let _ = writeln!(
            out,
            "Active goals: {} of {}",
            active.len(),
            plan.goals.len()
        );
    }
    for goal in active {
        out.push('\n');
        goal_block(&mut out, goal);
    }
    if let Some(log) = &plan.log {
        let skip = log.entries.len().saturating_sub(INJECTED_LOG_LINES);
        out.push_str("\nLast log lines:\n");
        if log.entries.is_empty() {
            out.push_str("(none yet)\n");
        }
        for entry in &log.entries[skip..] {
            let _ = writeln!(out, "- {}", entry.text);
        }
    }
    out.push_str("</plan>");
    out
}

fn goal_block(out: &mut String, goal: &Goal) {
    let _ = writeln!(
        out,
        "## {} — {}",
        goal.id().unwrap_or("(no id)"),
        goal.title
    );
    let value = |l: &Option<tether_plan::Located<String>>| {
        l.as_ref()
            .map_or("(not set)", |l| l.value.as_str())
            .to_owned()
    };
    let _ = writeln!(out, "done_when: {}", value(&goal.done_when));
    if goal.verify.is_some() {
        let _ = writeln!(out, "verify: {}", value(&goal.verify));
    }
    if !goal.failure_modes.is_empty() {
        out.push_str("failure_modes:\n");
        for mode in &goal.failure_modes {
            let _ = writeln!(out, "- {}", mode.value);
        }
    }
    if !goal.ask_before.is_empty() {
        let prefixes: Vec<&str> = goal.ask_before.iter().map(|p| p.value.as_str()).collect();
        let _ = writeln!(out, "ask_before: {}", prefixes.join(", "));
    }
    if let Some(t) = goal.threshold() {
        let _ = writeln!(out, "threshold: {t}");
    }
    let _ = writeln!(
        out,
        "subtasks: {} of {} done",
        goal.done_subtasks(),
        goal.subtasks.len()
    );
    for subtask in goal.subtasks.iter().filter(|s| !s.checked) {
        let _ = writeln!(out, "- [ ] {}", subtask.text);
    }
}

/// How the agent may reach a human at this threshold.
pub fn asking(threshold: u8) -> String {
    if threshold == 0 {
        return format!(
            "No human is available for questions in this run. {}",
            threshold_guidance(0)
        );
    }
    format!(
        "A human is reachable through `ask_human` (interaction level {threshold} of 5). {}",
        threshold_guidance(threshold)
    )
}

/// The whole prompt for one iteration.
pub fn iteration(plan: Injected<'_>, threshold: u8, owed: &[Feedback]) -> String {
    whole(framing(plan.file), plan, threshold, owed)
}

/// The whole prompt for one iteration of a run whose iterations continue the agent's session:
/// what its first turn, and any turn that starts over, is given.
pub fn iteration_continuing(plan: Injected<'_>, threshold: u8, owed: &[Feedback]) -> String {
    whole(framing_continuing(plan.file), plan, threshold, owed)
}

/// What a turn continuing the agent's session is given: the plan as it stands, then the
/// feedback owed.
pub fn continuation(plan: Injected<'_>, owed: &[Feedback]) -> String {
    let mut out = String::from(
        "Next iteration: go on toward the active goals as before (keep the plan current, sign \
         off with complete_goal, end with a short summary). The plan as it stands:\n\n",
    );
    out.push_str(&plan_injection(plan));
    push_owed(&mut out, owed);
    out
}

/// `framing`, the plan injection, the asking guidance and the feedback owed.
fn whole(framing: String, plan: Injected<'_>, threshold: u8, owed: &[Feedback]) -> String {
    let mut out = framing;
    out.push_str("\n\n");
    out.push_str(&plan_injection(plan));
    out.push_str("\n\n");
    out.push_str(&asking(threshold));
    push_owed(&mut out, owed);
    out
}

/// The feedback owed, after a rule, when there is any.
fn push_owed(out: &mut String, owed: &[Feedback]) {
    if !owed.is_empty() {
        out.push_str("\n\n---\nSince the last iteration:");
        for item in owed {
            out.push_str("\n\n");
            out.push_str(&feedback(item));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use tether_plan::PlanDoc;

    use super::*;

    const PLAN: &str = "# Plan: make the cache fast\n\n## Goal: Implement cache layer\n\
        <!-- id: cache-layer -->\nstatus: active\n\
        done_when: p95 < 50ms on the bench\nverify: cargo test -p cache\nfailure_modes:\n\
        - cache silently bypassed\n- verify passes on a trivial test\nask_before: git push\n\
        threshold: 3\n\n- [x] wire cache client\n- [ ] eviction policy\n\n\
        ## Goal: Docs\n<!-- id: docs -->\nstatus: open\ndone_when: README says how\n\n\
        ## Log\n- 2026-06-15 14:02 cache client wired; eviction next\n";

    fn plan() -> tether_plan::Plan {
        PlanDoc::parse("plan.md", PLAN).plan().clone()
    }

    /// The whole of [`plan`].
    fn whole_plan(plan: &Plan) -> Injected<'_> {
        Injected::whole("plan.md", plan)
    }

    #[test]
    fn the_first_prompt() {
        insta::assert_snapshot!(iteration(whole_plan(&plan()), 2, &[]));
    }

    #[test]
    fn a_scoped_run_is_shown_the_goals_of_its_scope_alone() {
        let mut ours = plan();
        ours.goals.retain(|g| g.id() == Some("cache-layer"));
        let injected = Injected {
            file: "plan.md",
            plan: &ours,
            scoped: true,
        };
        let whole = iteration(injected, 2, &[]);
        assert!(!whole.contains("docs"), "{whole}");
        insta::assert_snapshot!(plan_injection(injected));
    }

    #[test]
    fn a_run_that_continues_the_session_says_so_and_then_sends_only_what_is_new() {
        let whole = iteration_continuing(whole_plan(&plan()), 2, &[]);
        assert_eq!(
            whole.replace(&framing_continuing("plan.md"), &framing("plan.md")),
            iteration(whole_plan(&plan()), 2, &[]),
            "only the framing differs"
        );
        assert!(whole.contains("in one conversation"), "{whole}");
        let owed = [Feedback::Rejected {
            goal: "cache-layer".into(),
            reason: "verify failed (exit 1)".into(),
            missing: Vec::new(),
        }];
        insta::assert_snapshot!(continuation(whole_plan(&plan()), &owed));
    }

    #[test]
    fn every_feedback_text() {
        let owed = [
            Feedback::Message {
                by: "ana".into(),
                text: "use LRU".into(),
            },
            Feedback::OwnNote {
                text: "LRU chosen; eviction tests next".into(),
            },
            Feedback::Answers(vec![("Which cache?".into(), "LRU".into())]),
            Feedback::Rejected {
                goal: "cache-layer".into(),
                reason: "verify failed (exit 1): test cache::evicts ... FAILED".into(),
                missing: vec!["an eviction test".into()],
            },
            Feedback::Reminder,
            Feedback::CleanEnd {
                goal: "cache-layer".into(),
                verify: Some("cargo test -p cache".into()),
            },
            Feedback::Oscillation,
            Feedback::UnsignedDone {
                goal: "cache-layer".into(),
            },
            Feedback::UnjudgedAccept {
                goal: "cache-layer".into(),
            },
            Feedback::StatusReverted {
                goal: "cache-layer".into(),
                status: "cancelled".into(),
            },
            Feedback::Settle {
                goal: "cache-layer".into(),
                branch: "tether/r-1".into(),
                paths: vec!["src/cache.rs".into(), "Cargo.toml".into()],
            },
            Feedback::Continuation {
                n: 4,
                summary: "wired the LRU; tests next".into(),
            },
        ];
        insta::assert_snapshot!(iteration(whole_plan(&plan()), 0, &owed));
    }

    #[test]
    fn an_unchanged_plan_gives_the_same_prefix() {
        let a = iteration(whole_plan(&plan()), 2, &[]);
        let b = iteration(
            whole_plan(&plan()),
            2,
            &[Feedback::Continuation {
                n: 1,
                summary: "x".into(),
            }],
        );
        assert!(b.starts_with(&a));
    }
}
