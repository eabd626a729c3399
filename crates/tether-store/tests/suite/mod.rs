//! Integration test modules, one per area of the store.

mod common;
mod crash;
mod journal;
mod migrations;
mod multiprocess;
mod projection;
mod questions;
mod signoff;
mod wire;
