//! Test modules; `common` holds the shared fixtures, `chaos_scenario` the seeded scenario the
//! soak bench also runs.

mod chaos;
pub mod chaos_scenario;
pub mod common;
mod faults;
mod happy;
mod secrets;
mod several;
mod socket;
