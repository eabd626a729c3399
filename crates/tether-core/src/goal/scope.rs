//! A goal run's scope: the goals of the plan it works on. A run without one works on every
//! active goal. A scoped run works on the active goals it was given alone: the plan's other
//! goals, active or not, are not its work — it does not show them to the agent, reconcile them,
//! count their sign-offs, remind about them or wait for them to end.

use std::borrow::Cow;

use tether_plan::{Plan, Status};

use super::{GoalSpec, LoopError};

impl GoalSpec {
    /// Whether goal `id` is one this run works on.
    pub(super) fn works_on(&self, id: &str) -> bool {
        self.scope.as_ref().is_none_or(|scope| scope.contains(id))
    }

    /// `plan` holding only the goals this run works on: `plan` itself when the run has no
    /// scope.
    pub(super) fn narrow<'p>(&self, plan: &'p Plan) -> Cow<'p, Plan> {
        if self.scope.is_none() {
            return Cow::Borrowed(plan);
        }
        let mut narrowed = plan.clone();
        narrowed
            .goals
            .retain(|g| g.id().is_some_and(|id| self.works_on(id)));
        Cow::Owned(narrowed)
    }

    /// Refuses a new run whose plan gives it nothing to work on: a goal of its scope the plan
    /// does not have, or no active goal (of its scope, when it has one).
    pub(super) fn check_work(&self, plan: &Plan) -> Result<(), LoopError> {
        if let Some(scope) = &self.scope {
            let unknown: Vec<String> = scope
                .iter()
                .filter(|id| plan.goal(id).is_none())
                .cloned()
                .collect();
            if !unknown.is_empty() {
                return Err(LoopError::ScopeNotInPlan {
                    plan: self.plan.clone(),
                    goals: unknown,
                });
            }
        }
        if self.narrow(plan).active_goals().next().is_some() {
            return Ok(());
        }
        Err(match &self.scope {
            None => LoopError::NoActiveGoals {
                plan: self.plan.clone(),
                open: plan
                    .goals
                    .iter()
                    .filter(|g| g.status() == Status::Open)
                    .filter_map(|g| g.id().map(str::to_owned))
                    .collect(),
            },
            Some(scope) => LoopError::ScopeInactive {
                plan: self.plan.clone(),
                goals: scope.iter().cloned().collect(),
            },
        })
    }
}
