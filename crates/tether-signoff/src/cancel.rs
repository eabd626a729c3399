//! Cancelling a goal: the agent's `cancel_goal` and a person's `tether goal cancel`.
//!
//! A cancelled goal leaves the run without a sign-off, so only a person may cancel one for good.
//! The agent's cancel ([`Signoff::cancel_goal`]) sets the goal `cancelled` and records that the
//! agent did it; the goal loop then pauses the run until a person confirms it
//! ([`Signoff::cancel_goal_by_person`], which also cancels an open or active goal outright) or
//! sets the goal back to active. Each is recorded in the store (who, why) and logged in the plan.

use tether_plan::Status;
use tether_store::NewCancellation;

use super::record::log_line;
use super::{CancelOutcome, Signoff, SignoffError};

impl Signoff {
    /// The agent cancels the goal `goal_id` (open or active → cancelled) with a log line giving
    /// `reason`, recorded as the agent's: a person still has to confirm it. No check runs.
    /// Refused for an unknown or closed goal, a plan with errors, or an empty reason.
    pub fn cancel_goal(&self, goal_id: &str, reason: &str) -> Result<CancelOutcome, SignoffError> {
        self.cancel(goal_id, reason, None)
    }

    /// The person `who` cancels the goal `goal_id`: an open or active goal becomes cancelled,
    /// and a goal the agent cancelled is confirmed. Refused for an unknown, done or (already
    /// confirmed) cancelled goal, a plan with errors, or an empty reason.
    pub fn cancel_goal_by_person(
        &self,
        goal_id: &str,
        reason: &str,
        who: &str,
    ) -> Result<CancelOutcome, SignoffError> {
        self.cancel(goal_id, reason, Some(who))
    }

    fn cancel(
        &self,
        goal_id: &str,
        reason: &str,
        person: Option<&str>,
    ) -> Result<CancelOutcome, SignoffError> {
        let refused = |reason: String| CancelOutcome::Refused {
            goal_id: goal_id.to_owned(),
            reason,
        };
        let reason = reason.trim();
        if reason.is_empty() {
            return Ok(refused("a reason is required to cancel a goal".to_owned()));
        }
        let confirming = person.is_some() && self.awaits_confirmation(goal_id)?;
        if !confirming && let Err(why) = self.open_goal(goal_id) {
            return Ok(refused(why));
        }
        let line = match person {
            Some(who) if confirming => {
                log_line(goal_id, &format!("cancel confirmed by {who}"), reason, &[])
            }
            Some(who) => log_line(goal_id, &format!("cancelled by {who}"), reason, &[]),
            None => log_line(
                goal_id,
                "cancelled by the agent (a person must confirm)",
                reason,
                &[],
            ),
        };
        let status = (!confirming).then_some(Status::Cancelled);
        self.patch_plan(goal_id, status, &line)
            .map_err(|cause| SignoffError::PlanNotPatched {
                goal_id: goal_id.to_owned(),
                note: "nothing was changed",
                cause,
            })?;
        self.journal.store().record_cancellation(&NewCancellation {
            plan_path: self.plan_key(),
            goal_id: goal_id.to_owned(),
            by_person: person.is_some(),
            by: person.map_or_else(|| "agent".to_owned(), str::to_owned),
            reason: reason.to_owned(),
            run_id: self.run.clone(),
        })?;
        Ok(CancelOutcome::Cancelled {
            goal_id: goal_id.to_owned(),
            reason: reason.to_owned(),
            by_person: person.is_some(),
        })
    }

    /// Whether the goal is cancelled in the plan by the agent, and no person confirmed it yet.
    fn awaits_confirmation(&self, goal_id: &str) -> Result<bool, SignoffError> {
        let cancelled = tether_plan::file::read(&self.plan)
            .ok()
            .and_then(|doc| doc.plan().goal(goal_id).map(|g| g.status()))
            == Some(Status::Cancelled);
        if !cancelled {
            return Ok(false);
        }
        let latest = self
            .journal
            .store()
            .latest_cancellation(&self.plan_key(), goal_id)?;
        Ok(latest.is_some_and(|c| !c.cancel.by_person))
    }
}
