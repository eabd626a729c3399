//! The budget the goal runs of a run of many goals share (`tether run --parallel`): the run's
//! budgets (`--max-iterations`, `--max-tokens`, `--max-cost`, `--max-time` and `[loop]`) spent
//! by all its goals' runs together — their iterations, tokens and dollars added up, the time
//! counted from when the run of many goals began. Each goal run checks it at every iteration
//! boundary, before its own budgets, and stops as `budget_exhausted` once it is spent; the
//! coordinator starts no goal after that. Usage is read from the store, as every budget's is.
//!
//! On one machine the coordinator joins each goal run to the pool as it starts it; the goals
//! of a run of many goals on many machines share a pool read from the store's record of the
//! run (every goal's run, whichever worker drives it: [`BudgetPool::of_fleet`]).

use std::sync::{Arc, Mutex, PoisonError};

use tether_store::{Budget, Journal, Overrun, RunId, Spending, StoreError, first_spent};

/// The budget a run of many goals shares among its goals' runs.
#[derive(Clone, Debug)]
pub struct BudgetPool(Arc<Pool>);

#[derive(Debug)]
struct Pool {
    /// The limits, iterations included; unset units are unlimited.
    limits: Budget,
    /// When the run of many goals began (ms since the Unix epoch).
    began_ms: i64,
    /// The goal runs that share it.
    runs: Runs,
}

/// Which goal runs share a pool.
#[derive(Debug)]
enum Runs {
    /// Those joined to it.
    Joined(Mutex<Vec<RunId>>),
    /// Those the store's record of this run of many goals names.
    Fleet(RunId),
}

impl BudgetPool {
    /// A pool of `limits` (iterations included) for a run of many goals begun at `began_ms`.
    pub fn new(limits: Budget, began_ms: i64) -> Self {
        BudgetPool(Arc::new(Pool {
            limits,
            began_ms,
            runs: Runs::Joined(Mutex::new(Vec::new())),
        }))
    }

    /// A pool of `limits` for the run of many goals `fleet` begun at `began_ms`, shared by
    /// every goal run the store's record of it names (its goals on many machines).
    pub fn of_fleet(limits: Budget, began_ms: i64, fleet: RunId) -> Self {
        BudgetPool(Arc::new(Pool {
            limits,
            began_ms,
            runs: Runs::Fleet(fleet),
        }))
    }

    /// Goal run `run` spends from the pool from now on.
    pub fn join(&self, run: &RunId) {
        let Runs::Joined(runs) = &self.0.runs else {
            return;
        };
        let mut runs = runs.lock().unwrap_or_else(PoisonError::into_inner);
        if !runs.contains(run) {
            runs.push(run.clone());
        }
    }

    /// What the goal runs have spent together at `now_ms`, as `journal` records it (a run not
    /// recorded yet has spent nothing).
    pub fn spending(&self, journal: &Journal, now_ms: i64) -> Result<Spending, StoreError> {
        let runs = match &self.0.runs {
            Runs::Joined(runs) => runs.lock().unwrap_or_else(PoisonError::into_inner).clone(),
            Runs::Fleet(fleet) => {
                let record = journal.store().fleet(fleet)?;
                record.goals.into_iter().filter_map(|g| g.run_id).collect()
            }
        };
        let mut total = Spending {
            duration_secs: u64::try_from(now_ms.saturating_sub(self.0.began_ms) / 1000)
                .unwrap_or(0),
            ..Spending::default()
        };
        for run in &runs {
            let spent = match journal.state(run) {
                Ok(state) => state.spending(now_ms),
                Err(StoreError::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            total.iterations = total.iterations.saturating_add(spent.iterations);
            total.tokens = total.tokens.saturating_add(spent.tokens);
            total.cost_usd += spent.cost_usd;
        }
        Ok(total)
    }

    /// The first of the pool's budgets the goal runs have spent together, if one is.
    pub fn spent(&self, journal: &Journal, now_ms: i64) -> Result<Option<Overrun>, StoreError> {
        Ok(first_spent(
            &self.0.limits,
            &self.spending(journal, now_ms)?,
        ))
    }
}
