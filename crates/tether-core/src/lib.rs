//! tether's loops and the commands around them: the Ralph loop ([`ralph`]) and the goal loop
//! ([`goal`]), each a [`looping::LoopKind`] run by the one loop driver ([`looping`]); plan mode
//! ([`planning`]); the run's whole configuration, kept to what was recorded or accepted ([`bounds`]); the requests other processes make of a running loop ([`control`]); one
//! process per run ([`run_lock`]); the acts only a person may do ([`human_act`]) and the
//! subreaper that keeps an agent's descendants in the loop's tree ([`subreaper`]); setting a repository up ([`init`]) and checking it
//! ([`validate`]); what a question asked on the side is told of a run ([`side`]); and every
//! prompt the loops give the agent ([`prompts`]).
//!
//! Asking a human (`tether-human`) and signing a goal off (`tether-signoff`) are crates of their
//! own below this one. It never prints: the binary decides what reaches the terminal, so stdout
//! stays free for protocols and `--json`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod ask_before;
pub mod bounds;
pub mod control;
pub mod fleet;
pub mod goal;
pub mod human_act;
pub mod init;
pub mod loop_judge;
pub mod looping;
pub mod permissions;
pub mod planning;
pub mod prompts;
pub mod ralph;
pub mod report;
pub mod schedule;
pub mod side;
pub mod snapshot;
/// The run lock lives with the store, so that every reader of runs can tell a live one.
pub mod run_lock {
    pub use tether_store::run_lock::{LockError, RunLock};
}
pub mod subreaper;
pub mod validate;
