//! Many goals of one plan at once (`tether run --parallel N`): what the coordinator decides
//! ([`schedule`]). Each goal works in a worktree of its own on a branch cut from the run's, and
//! a signed-off goal is merged back (`tether-worktree`); a goal starts only when every goal in
//! its `after:` is merged.

pub mod schedule;

#[cfg(test)]
mod schedule_tests;

pub use schedule::{Finish, Phase, Schedule, Step};
