//! Test modules; `common` holds the shared fixtures, `chaos_scenario` the seeded scenario the
//! soak bench also runs.

mod api;
mod cancel;
mod chaos;
pub mod chaos_scenario;
mod common;
mod config;
mod faults;
mod follow_up;
mod happy;
mod resume;
mod secrets;
