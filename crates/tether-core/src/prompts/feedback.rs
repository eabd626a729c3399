//! What a prompt owes the agent after its fixed part, in both loops: messages a person sent
//! (`tether say`) and the notes the agent left itself with its own `tether say` (shown as its
//! own, never as a person's), answers to questions an interrupted iteration asked or that came after the
//! asking call gave up, and the goal loop's
//! sign-off results, reminders and continuation line. Each is rendered the same way wherever it
//! appears.

use std::fmt::Write as _;

/// Something the next prompt owes the agent, after the fixed part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feedback {
    /// A message typed by the user (`tether say`).
    Message {
        /// Who sent it.
        by: String,
        /// What they said.
        text: String,
    },
    /// A note the agent left itself with its own `tether say`: its words, never a person's.
    OwnNote {
        /// What it said.
        text: String,
    },
    /// Answers to questions asked in an interrupted iteration.
    Answers(Vec<(String, String)>),
    /// Answers that came after the agent's `ask_human` call had stopped waiting (its client
    /// timed out).
    LateAnswers(Vec<(String, String)>),
    /// A sign-off attempt was rejected.
    Rejected {
        /// The goal.
        goal: String,
        /// Why.
        reason: String,
        /// What the judge found missing.
        missing: Vec<String>,
    },
    /// Files changed for a while but the plan did not.
    Reminder,
    /// Every subtask of a goal is ticked, but it is not signed off.
    CleanEnd {
        /// The goal.
        goal: String,
        /// Its verify command, if any.
        verify: Option<String>,
    },
    /// The same failing verify output keeps coming back.
    Oscillation,
    /// A goal was marked done by hand without a sign-off and was set back to active.
    UnsignedDone {
        /// The goal.
        goal: String,
    },
    /// A goal was signed off without the judge in a run that has one, and was set back to
    /// active.
    UnjudgedAccept {
        /// The goal.
        goal: String,
    },
    /// A goal was set to `open` or `cancelled` without a person, and was set back to active.
    StatusReverted {
        /// The goal.
        goal: String,
        /// The status it had been given.
        status: String,
    },
    /// The goal was signed off on its branch, but merging the run's branch into it left
    /// conflict markers: the agent settles them and signs the goal off again.
    Settle {
        /// The goal.
        goal: String,
        /// The branch merged in.
        branch: String,
        /// The paths with conflict markers.
        paths: Vec<String>,
    },
    /// What the previous iteration said it did.
    Continuation {
        /// Its number.
        n: u32,
        /// The first line of its final message.
        summary: String,
    },
}

/// The upkeep reminder.
pub const REMINDER: &str = "Reminder: you have changed files for several iterations without \
    updating the plan. Tick the subtasks you finished and add any you discovered; append one \
    short line to `## Log`; if a goal's evidence is in, sign it off with `complete_goal` (never \
    by writing `status: done`); then keep working toward the active goals. Do not stop to ask \
    unless you are really blocked.";

/// The oscillation nudge (only given when asking is allowed).
pub const OSCILLATION: &str = "You appear stuck in a loop making the same changes repeatedly. \
    Consider using ask_human to get guidance.";

/// One piece of feedback as prompt text.
pub fn feedback(item: &Feedback) -> String {
    match item {
        Feedback::Message { by, text } => format!("A message from {by}: {text}"),
        Feedback::OwnNote { text } => format!(
            "A note you left yourself with `tether say` in an earlier iteration (your own words, \
             not a person's): {text}"
        ),
        Feedback::Answers(answers) => answered_while_interrupted(answers),
        Feedback::LateAnswers(answers) => answered_late(answers),
        Feedback::Rejected {
            goal,
            reason,
            missing,
        } => {
            let mut out = format!("Signing off `{goal}` was rejected: {reason}");
            if !missing.is_empty() {
                out.push_str("\nWhat is missing:");
                for m in missing {
                    let _ = write!(out, "\n- {m}");
                }
            }
            out
        }
        Feedback::Reminder => REMINDER.to_owned(),
        Feedback::CleanEnd { goal, verify } => {
            let check = verify.as_ref().map_or_else(String::new, |v| {
                format!(" (its verify command `{v}` runs first)")
            });
            format!(
                "Every subtask of `{goal}` is ticked, but the goal is not signed off. Pick one:\n\
                 1. If done_when holds, call `complete_goal` for `{goal}` with your evidence{check}.\n\
                 2. If residual work surfaced, add it as new subtasks and continue.\n\
                 Do not invent new work outside the plan."
            )
        }
        Feedback::Oscillation => OSCILLATION.to_owned(),
        Feedback::UnsignedDone { goal } => format!(
            "`{goal}` was marked `status: done` without a sign-off, so tether set it back to \
             active. A goal is done only when `complete_goal` accepts it."
        ),
        Feedback::UnjudgedAccept { goal } => format!(
            "`{goal}` was signed off without the judge, which does not count in this run (it has \
             a judge), so tether set it back to active. Sign it off with `complete_goal`."
        ),
        Feedback::StatusReverted { goal, status } => format!(
            "`{goal}` was set to `status: {status}` without a person, so tether set it back to \
             active. A goal leaves the run only when `complete_goal` accepts it or a person \
             cancels it; if it should be dropped, say why with `cancel_goal` (a person confirms) \
             or ask a human."
        ),
        Feedback::Settle {
            goal,
            branch,
            paths,
        } => format!(
            "`{goal}` was signed off on its own branch, but other goals of the run were merged \
             into the run's branch `{branch}` meanwhile, and merging that branch into yours \
             conflicts in: {}. Those files hold git's conflict markers (`<<<<<<<`, `=======`, \
             `>>>>>>>`). Settle each conflict so both sides' work is kept, leave no marker, \
             make sure `{goal}`'s done_when still holds, then sign it off again with \
             `complete_goal` (its earlier sign-off was of the work before the merge). Do not \
             run `git merge`, `git commit` or `git checkout` yourself: tether commits the \
             settled merge when the goal is signed off.",
            paths.join(", ")
        ),
        Feedback::Continuation { n, summary } => {
            format!("Iteration {n} ended with: {summary}")
        }
    }
}

/// The answers to questions asked in an interrupted iteration, as one paragraph.
pub fn answered_while_interrupted(answers: &[(String, String)]) -> String {
    let mut out = String::from(
        "In an earlier attempt at this iteration, which was interrupted, you asked a human and \
         they have answered. Use their answers; do not ask these again.",
    );
    for (question, answer) in answers {
        out.push_str(&format!("\nQuestion: {question}\nAnswer: {answer}"));
    }
    out
}

/// The answers that came after the agent's `ask_human` call had stopped waiting, as one
/// paragraph.
pub fn answered_late(answers: &[(String, String)]) -> String {
    let mut out = String::from(
        "A human has now answered a question you asked earlier, after your ask_human call had \
         stopped waiting for it. Use their answer; do not ask it again.",
    );
    for (question, answer) in answers {
        out.push_str(&format!("\nQuestion: {question}\nAnswer: {answer}"));
    }
    out
}
