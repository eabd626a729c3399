//! Budgets at an iteration boundary: the run's (iterations, tokens, dollars, running time) and
//! each worked-on goal's own (its `budget:` line), each with what people added. The first one
//! spent stops the run as `budget_exhausted`, with a `budget_spent` event naming the unit, the
//! amounts and whose budget it was; `tether resume --add-…` raises it.
//!
//! Usage is counted from the store (every agent turn's and judge call's usage events), so a
//! resumed run, a run driven by another process and a run on a team store all count the same.

use tether_store::{Budget, Event, Outcome, RunState, SpentBudget, first_spent, now_ms};

use super::kind::{At, Limits, Stopped};
use super::{LoopError, driver};

/// The first budget `state` has spent, the run's before its goals'.
pub(super) fn spent(
    state: &RunState,
    limits: &Limits,
    goals: &[(String, Option<Budget>)],
    now: i64,
) -> Option<SpentBudget> {
    let mut base = limits.budget;
    base.iterations = limits.max_iterations;
    if let Some(overrun) = first_spent(&state.limits(&base), &state.spending(now)) {
        return Some(SpentBudget {
            overrun,
            goal_id: None,
            raised: false,
        });
    }
    goals.iter().find_map(|(goal, budget)| {
        let limits = state.goal_limits(goal, budget.as_ref()?);
        let spent = state.goal_usage.get(goal).copied().unwrap_or_default();
        let overrun = first_spent(&limits, &spent.spending())?;
        Some(SpentBudget {
            overrun,
            goal_id: Some(goal.clone()),
            raised: false,
        })
    })
}

/// Stops the run when a budget is spent: records which, then `budget_exhausted`.
pub(super) async fn check(
    at: At<'_>,
    state: &RunState,
    limits: &Limits,
    goals: &[(String, Option<Budget>)],
) -> Result<Option<Stopped>, LoopError> {
    let Some(spent) = spent(state, limits, goals, now_ms()) else {
        return Ok(None);
    };
    tracing::info!(run = %at.run, "{}", spent.describe());
    at.deps.journal.append(
        at.run,
        &Event::BudgetSpent {
            unit: spent.overrun.unit,
            used: spent.overrun.used,
            limit: spent.overrun.limit,
            goal_id: spent.goal_id.clone(),
        },
    )?;
    driver::finish(at.deps, at.run, Outcome::BudgetExhausted).await?;
    Ok(Some(Stopped::BudgetSpent {
        iteration: state.iteration,
    }))
}
