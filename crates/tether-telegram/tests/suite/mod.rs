//! Test modules; `common` holds the fixtures, `chaos_scenario` the seeded scenario the soak bench
//! also runs.

mod chaos;
pub mod chaos_scenario;
pub mod common;
mod faults;
mod happy;
mod pollers;
