//! The circuit breaker: a goal rejected `escalate_after_rejects` times in a row (default 3) —
//! counting a `complete_goal` refused because nothing changed since a rejection — is not
//! retried blindly. The run asks a person, with the judge's `missing` lists, to choose:
//!
//! - **continue**: the agent goes on, told what was missing (the person's own words, when they
//!   answer in their own words, are passed on as a message);
//! - **change the contract**: the run pauses so the person can edit the goal's `done_when` or
//!   `verify` and approve it again (`tether plan approve`), then `tether resume`;
//! - **cancel the goal**: cancelled as a person's act (logged in the plan, recorded with who);
//! - **pause**: the run pauses.
//!
//! When nobody can be asked, the run pauses with that reason.

use tether_signoff::{CancelOutcome, Signoff};

use super::GoalEnd;
use super::cycle::GoalLoop;
use super::rules::Escalation;
use crate::looping::{Answered, At, HumanCall, LoopError, Next, Why};
use crate::prompts::Feedback;

/// The choices, in the order offered.
pub(super) const CHOICES: [&str; 4] = [
    "continue",
    "change the contract",
    "cancel the goal",
    "pause",
];

/// The question for an escalated goal.
pub(super) fn call(e: &Escalation) -> HumanCall {
    let mut context = format!("The last rejection: {}", e.reason);
    if !e.missing.is_empty() {
        context.push_str("\nWhat the judge found missing:");
        for item in &e.missing {
            context.push_str(&format!("\n- {item}"));
        }
    }
    HumanCall {
        why: Why::CircuitBreaker {
            goal: e.goal.clone(),
            rejects: e.rejects,
        },
        question: format!(
            "Goal `{}` was rejected {} times in a row. Keep the agent on it, change its \
             contract, cancel it, or pause the run?",
            e.goal, e.rejects
        ),
        context,
        options: CHOICES.iter().map(|c| (*c).to_owned()).collect(),
        unreachable: format!(
            "goal `{}` was rejected {} times in a row",
            e.goal, e.rejects
        ),
    }
}

impl GoalLoop {
    /// Does what the person chose for an escalated goal.
    pub(super) fn breaker_answered(
        &mut self,
        at: At<'_>,
        goal: &str,
        rejects: u32,
        answer: Answered,
    ) -> Result<Next<GoalEnd>, LoopError> {
        let pause = |reason: String| Ok(Next::Pause(reason.clone(), GoalEnd::paused(reason)));
        match answer.choice {
            Some(1) => pause(format!(
                "{} chose to change the contract of goal `{goal}`: edit its done_when or \
                 verify in the plan, approve it with `tether plan approve`, then `tether resume \
                 {}`",
                answer.by, at.run
            )),
            Some(2) => self.cancel(at, goal, rejects, &answer),
            Some(3) => pause(format!(
                "paused by {} after goal `{goal}` was rejected {rejects} times in a row",
                answer.by
            )),
            Some(_) => {
                self.owed.push(Feedback::Message {
                    by: answer.by,
                    text: format!(
                        "Keep working on goal `{goal}`: it was rejected {rejects} times in a row; \
                         fix what the judge found missing before asking for a sign-off again."
                    ),
                });
                Ok(Next::Continue)
            }
            None => {
                self.owed.push(Feedback::Message {
                    by: answer.by,
                    text: format!("About goal `{goal}`: {}", answer.text),
                });
                Ok(Next::Continue)
            }
        }
    }

    /// Cancels `goal` as the person's act; the next reconcile lets it leave the run.
    fn cancel(
        &mut self,
        at: At<'_>,
        goal: &str,
        rejects: u32,
        answer: &Answered,
    ) -> Result<Next<GoalEnd>, LoopError> {
        let signoff = Signoff::new(at.deps.ws.clone(), at.deps.journal.clone(), &self.spec.plan);
        let reason = format!("rejected {rejects} times in a row; cancelled when asked");
        match signoff.cancel_goal_by_person(goal, &reason, &answer.by) {
            Ok(CancelOutcome::Cancelled { .. }) => Ok(Next::Continue),
            Ok(CancelOutcome::Refused { reason, .. }) => {
                let reason = format!("goal `{goal}` could not be cancelled: {reason}");
                Ok(Next::Pause(reason.clone(), GoalEnd::paused(reason)))
            }
            Err(e) => {
                let reason = format!("goal `{goal}` could not be cancelled: {e}");
                Ok(Next::Pause(reason.clone(), GoalEnd::paused(reason)))
            }
        }
    }
}
