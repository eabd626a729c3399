//! One read model of a run, which every surface reads — `tether status`, the dashboard, the run
//! report, `tether watch` — so they cannot disagree about what a run is doing:
//!
//! - [`RunHeader`]: where a run stands (its state, whether a process drives it, its iteration
//!   and budget, what it used, what it works toward), from its row alone ([`RunHeader::of`]);
//! - [`Group`]: the group a person looks for it in — needs input, running, paused, done — where
//!   a run waiting for a person is never shown as working;
//! - [`runs`]: the runs of a store, newest first, or grouped with the waiting ones first;
//! - [`Activity`]: its last step and last tool call, from the journal's tail;
//! - [`usage_series`]: what each iteration used — tokens, cost, time, the judges' share — which
//!   the run's row keeps only as totals;
//! - [`usage_line`] and [`budget_line`]: what it used and what is left, said the same way on
//!   every surface;
//! - [`Context`]: what a timeline shows beside the journal's events: each question and each
//!   verdict by its id.
//!
//! - [`Changes`]: when the store changed, so a live surface re-reads the journal then, and only
//!   then.
//!
//! Everything here only reads the store (and a run's lock file, to tell whether a process of
//! this machine drives it).

#![deny(missing_docs)]

mod activity;
mod changes;
mod context;
mod group;
mod header;
mod lines;
mod series;

pub use activity::{Activity, activity};
pub use changes::{Changes, OnChanged};
pub use context::Context;
pub use group::{Group, grouped};
pub use header::{RunHeader, lock_of, runs};
pub use lines::{budget_line, usage_line};
pub use series::{IterationUsage, recent_usage_series, usage_series};
