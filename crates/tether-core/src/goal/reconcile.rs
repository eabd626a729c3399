//! The reconcile step: before each iteration the plan is put right where the store knows
//! better, since only a recorded sign-off makes a goal done.

use tether_plan::{PlanDoc, Status};
use tether_store::{Event, Rule, Verdict};

use super::LoopError;
use super::cycle::GoalLoop;
use crate::looping::At;
use crate::prompts::Feedback;
use tether_plan::file as plan_file;

impl GoalLoop {
    /// Reads the plan and puts it right where the store knows better: a goal of this run marked
    /// `done` with no sign-off goes back to `active` (and the next prompt says why); a goal
    /// whose sign-off was recorded but whose `status: done` never got written (a crash in
    /// between) is marked done.
    pub(super) fn reconcile(&mut self, at: At<'_>) -> Result<PlanDoc, LoopError> {
        let doc = plan_file::read(&self.plan_path)?;
        if let Err(e) = doc.check() {
            return Err(LoopError::PlanInvalid(e.to_string()));
        }
        let mut reopen = Vec::new();
        let mut finish = Vec::new();
        for goal in &doc.plan().goals {
            let Some(id) = goal.id() else { continue };
            let accepted = self.accepted(at, id, &goal.contract_hash())?;
            match goal.status() {
                Status::Done if self.goals.contains(id) && !accepted => reopen.push(id.to_owned()),
                Status::Active if accepted => finish.push(id.to_owned()),
                _ => {}
            }
        }
        if reopen.is_empty() && finish.is_empty() {
            return Ok(doc);
        }
        for id in &reopen {
            at.deps.journal.append(
                at.run,
                &Event::RuleFired {
                    rule: Rule::UnsignedDone,
                    reason: format!(
                        "`{id}` was marked done without a sign-off; set back to active"
                    ),
                },
            )?;
            self.owed.push(Feedback::UnsignedDone { goal: id.clone() });
        }
        for id in &reopen {
            plan_file::patch(&self.plan_path, |doc| doc.set_status(id, Status::Active))?;
        }
        for id in &finish {
            plan_file::patch(&self.plan_path, |doc| doc.set_status(id, Status::Done))?;
        }
        Ok(plan_file::read(&self.plan_path)?)
    }

    /// Whether the goal was accepted against the contract it has now.
    fn accepted(&self, at: At<'_>, id: &str, contract: &str) -> Result<bool, LoopError> {
        let verdicts = at
            .deps
            .journal
            .store()
            .verdicts_for_goal(&self.spec.plan, id)?;
        Ok(verdicts.iter().any(|v| {
            v.decision.verdict == Verdict::Accept
                && v.decision
                    .contract_hash
                    .as_deref()
                    .is_none_or(|h| h == contract)
        }))
    }
}
