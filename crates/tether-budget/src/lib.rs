//! Budgets: how much a run, or one goal of it, may spend before a person must say "go on".
//!
//! A runaway loop burns tokens, money and hours, not just iterations, so a budget can be set in
//! any of four [`Unit`]s; each unset unit is unlimited. This crate is the one place that knows
//! how amounts are spelled (`400k tokens, $5, 2h` in a goal's `budget:` line, `max_tokens =
//! "400k"` in `tether.toml`, `--add-time 2h` on the command line) and how a limit, the raises a
//! person granted and what was spent decide that a budget is spent ([`first_spent`]).
//!
//! It is pure: no I/O, no clock. The store folds what was spent; the loops compare.

#![deny(missing_docs)]

mod amount;
mod limits;

pub use amount::{
    BudgetError, format_cost, format_duration, format_tokens, parse_budget, parse_cost,
    parse_duration, parse_iterations, parse_tokens,
};
pub use limits::{Budget, Overrun, Spending, Unit, first_spent};
