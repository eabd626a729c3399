//! Test modules; `common` holds the shared fixtures.

mod cache;
mod cancel;
mod common;
mod faults;
mod scripted;
mod secrets;
mod snapshots;
mod text;
mod tools;
