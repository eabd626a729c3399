//! Budgets on the command line: the `--max-tokens`, `--max-cost` and `--max-duration` of
//! `tether run` and `tether ralph` (over `[loop]`'s), and the raises of `tether resume`
//! (`--add-tokens`, `--add-cost`, `--add-time`, `--add-iterations`), which only a person may
//! give.

use anyhow::Result;
use tether_config::LoopConfig;
use tether_runtime::human_act::{HumanAct, require_human};
use tether_store::{Budget, Event, Run, Store, Unit};

use super::Ctx;
use crate::cli::{BudgetArgs, RaiseArgs};

/// A new run's budgets besides iterations: the flags, else `[loop]`.
pub fn from_flags(config: &LoopConfig, args: &BudgetArgs) -> Budget {
    Budget {
        iterations: None,
        tokens: args.max_tokens.or(config.budget.tokens),
        cost_usd: args.max_cost_usd.or(config.budget.cost_usd),
        duration_secs: args.max_duration.or(config.budget.duration_secs),
    }
}

/// Whether any raise is given.
pub fn any_raise(args: &RaiseArgs) -> bool {
    !raises(args).is_empty()
}

/// The raises given, by unit (read as the dashboard's are: one way to turn amounts into raises).
fn raises(args: &RaiseArgs) -> Vec<(Unit, f64)> {
    tether_runtime::budget::raises_of(&Budget {
        iterations: args.add_iterations,
        tokens: args.add_tokens,
        cost_usd: args.add_cost,
        duration_secs: args.add_time,
    })
}

/// Records the raises `args` gives `run`, as `by`, before it is resumed. A run stopped by a
/// budget that must be raised (anything but its own iteration budget, which a plain resume
/// renews) is refused without the raise it needs, naming the flag.
pub fn raise(ctx: &Ctx<'_>, store: &Store, run: &Run, args: &RaiseArgs, by: &str) -> Result<()> {
    let raises = raises(args);
    if raises.is_empty() {
        return Ok(tether_runtime::budget::resumable(run)?);
    }
    require_human(&ctx.ws, ctx.env, HumanAct::RaiseBudget)?;
    for event in tether_runtime::budget::raise(store, run, &raises, by)? {
        if let Event::BudgetRaised {
            unit,
            amount,
            goal_id,
            ..
        } = event
        {
            let whose = goal_id
                .as_ref()
                .map_or_else(|| "the run's".to_owned(), |g| format!("goal {g}'s"));
            eprintln!("raised {whose} {} by {}", unit.noun(), unit.format(amount));
        }
    }
    Ok(())
}
