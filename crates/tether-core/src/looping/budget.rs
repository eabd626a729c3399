//! Budgets at an iteration boundary: the run's (iterations, tokens, dollars, running time) and
//! each worked-on goal's own (its `budget:` line), each with what people added. The first one
//! spent stops the run as `budget_exhausted`, with a `budget_spent` event naming the unit, the
//! amounts and whose budget it was; `tether resume --add-…` raises it.
//!
//! Usage is counted from the store (every agent turn's and judge call's usage events), so a
//! resumed run, a run driven by another process and a run on a team store all count the same.

use tether_store::{Event, Outcome, RunState, SpentBudget, first_spent, now_ms};

use super::kind::{At, Focus, Limits, Stopped};
use super::{LoopError, driver};

/// The first budget `state` has spent, the run's before its goals'.
pub(super) fn spent(
    state: &RunState,
    limits: &Limits,
    goals: &[Focus],
    now: i64,
) -> Option<SpentBudget> {
    let mut base = limits.budget;
    base.iterations = limits.max_iterations;
    if let Some(overrun) = first_spent(&state.limits(&base), &state.spending(now)) {
        return Some(SpentBudget {
            overrun,
            goal_id: None,
            raised: false,
            shared: false,
        });
    }
    goals.iter().find_map(|focus| {
        let limits = state.goal_limits(&focus.id, focus.budget.as_ref()?);
        let spent = state.goal_usage.get(&focus.id).copied().unwrap_or_default();
        let overrun = first_spent(&limits, &spent.spending())?;
        Some(SpentBudget {
            overrun,
            goal_id: Some(focus.id.clone()),
            raised: false,
            shared: false,
        })
    })
}

/// The budget a run of many goals shares, when this run is one of its goals' and the goals
/// have spent it together.
fn pool_spent(at: At<'_>, now: i64) -> Result<Option<SpentBudget>, LoopError> {
    let Some(pool) = &at.deps.pool else {
        return Ok(None);
    };
    Ok(pool
        .spent(&at.deps.journal, now)?
        .map(|overrun| SpentBudget {
            overrun,
            goal_id: None,
            raised: false,
            shared: true,
        }))
}

/// Stops the run when a budget is spent (the shared one of a run of many goals first): records
/// which, then `budget_exhausted`.
pub(super) async fn check(
    at: At<'_>,
    state: &RunState,
    limits: &Limits,
    goals: &[Focus],
) -> Result<Option<Stopped>, LoopError> {
    let now = now_ms();
    let spent = match pool_spent(at, now)? {
        Some(spent) => Some(spent),
        None => spent(state, limits, goals, now),
    };
    let Some(spent) = spent else {
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
            shared: spent.shared,
        },
    )?;
    driver::finish(at.deps, at.run, Outcome::BudgetExhausted).await?;
    Ok(Some(Stopped::BudgetSpent {
        iteration: state.iteration,
    }))
}
