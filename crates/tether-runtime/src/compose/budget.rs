//! A stopped run's budgets raised before it is resumed (only a person may): the raises
//! recorded as events of the run, each going to the goal whose budget of that unit was spent,
//! else to the run; and a run stopped by a budget that must be raised refused without it.

use tether_store::{Event, Run, RunStatus, SpentBudget, Store, Unit};

use crate::error::{Error, Result};

/// The budget that stopped `run`, if one did.
fn spent(run: &Run) -> Option<&SpentBudget> {
    run.state
        .budget_spent
        .as_ref()
        .filter(|_| run.state.status == RunStatus::BudgetExhausted)
}

/// Refuses to resume `run` without a raise when a budget stopped it that a plain resume does
/// not renew, naming the flag that gives it more.
pub fn resumable(run: &Run) -> Result<()> {
    match spent(run) {
        Some(spent) if needs_raise(spent) => Err(Error::NeedsRaise {
            run: run.id.to_string(),
            spent: spent.describe(),
            hint: spent.raise_hint(run.id.as_str()),
        }),
        _ => Ok(()),
    }
}

/// The raises `add` names, by unit (a unit it leaves unset adds nothing; a zero adds nothing).
pub fn raises_of(add: &tether_store::Budget) -> Vec<(Unit, f64)> {
    Unit::ALL
        .into_iter()
        .filter_map(|unit| Some((unit, add.get(unit)?)))
        .filter(|(_, amount)| *amount > 0.0)
        .collect()
}

/// Refuses `raises` for `run` when a budget stopped it and none of them is of that budget's
/// unit (it would stop again at once), naming the flag that gives it more.
pub fn raise_fits(run: &Run, raises: &[(Unit, f64)]) -> Result<()> {
    match spent(run) {
        Some(spent) if !raises.iter().any(|(unit, _)| *unit == spent.overrun.unit) => {
            Err(Error::RaiseOtherUnit {
                run: run.id.to_string(),
                spent: spent.describe(),
                hint: spent.raise_hint(run.id.as_str()),
            })
        }
        _ => Ok(()),
    }
}

/// Records the `raises` (by unit) of `run`'s budgets, as `by`: a run a budget stopped must be
/// given more of that unit. The events recorded.
pub fn raise(store: &Store, run: &Run, raises: &[(Unit, f64)], by: &str) -> Result<Vec<Event>> {
    raise_fits(run, raises)?;
    let spent = spent(run);
    let events: Vec<Event> = raises
        .iter()
        .map(|&(unit, amount)| Event::BudgetRaised {
            unit,
            amount,
            // A goal's spent budget takes the raise of its unit; the rest goes to the run.
            goal_id: spent
                .filter(|s| s.overrun.unit == unit)
                .and_then(|s| s.goal_id.clone()),
            by: by.to_owned(),
        })
        .collect();
    store.append_all(Some(&run.id), &events)?;
    Ok(events)
}

/// Whether going on needs an explicit raise: every spent budget but the run's own iteration
/// budget (which a plain resume renews).
pub fn needs_raise(spent: &SpentBudget) -> bool {
    !(spent.overrun.unit == Unit::Iterations && spent.goal_id.is_none())
}

/// How a run stopped by a budget goes on: the raise it needs, or a plain resume.
pub fn go_on_hint(run: &str, spent: &SpentBudget) -> String {
    if needs_raise(spent) {
        spent.raise_hint(run)
    } else {
        format!("tether resume {run} (a new iteration budget)")
    }
}
