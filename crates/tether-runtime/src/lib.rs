//! Composing a tether run, for any front end: from a workspace, its configuration and what to
//! run, the runtime builds the store, the executor, the run's sandbox, the human desk, the
//! worktree and the loop, and hands back what drives, watches and cancels it. The `tether`
//! binary is one front end (it parses arguments and prints); a long-lived server is another.
//!
//! The crate is in two folders, and the arrows go one way, from the engines to the
//! composition:
//!
//! - `compose/`: what builds or drives a run — the store, the executor, the sandbox, the
//!   bridge, the worktree, the run's lifetime and configuration, [`launch`] (a run composed and
//!   driven, with a handle to watch, interrupt or cancel it) and [`served`] (the runs a server
//!   starts and resumes). Its `mod.rs` lists each part.
//! - `engines/`: the engine of one command each — [`doctor`], [`status`], [`ask`], [`gate`],
//!   [`mcp`], [`signoff`], [`plan`], [`drafting`], [`side`], [`push`], [`demo`],
//!   [`judge_test`]. Its `mod.rs` says which command each serves.
//!
//! Every module of both is re-exported here by its name (`tether_runtime::launch`,
//! `tether_runtime::doctor`), so a front end does not follow the folders. Beside them, for
//! the whole crate: [`schema()`], the one schema of `tether.toml` (the core tables and every
//! table the integrations declare), which every configuration is loaded with; [`human_act`],
//! the check every front end makes before an act only a person may do; and [`Host`], what the
//! embedding process gives the runtime once.
//!
//! Errors are [`Error`]s, each saying whether a person must fix something
//! ([`Error::is_usage`]).

mod compose;
mod engines;
mod error;
pub mod human_act;
mod schema;

pub use compose::{
    agent_key, agents, asking, bounds, bridge, budget, executor, fleet, launch, lifetime, process,
    reach, report, sandbox, scheduler, served, store, worktree,
};
pub use engines::{
    ask, demo, doctor, drafting, gate, judge_test, mcp, plan, push, side, signoff, status,
};
pub use error::{Error, Result};
pub use schema::{agents, declared, schema};

use std::sync::Arc;

/// What the process embedding the runtime gives it once: how a tether command handed over by a
/// sandboxed agent is run there (the binary parses and runs its own commands). While a run is
/// composed, its copy also carries the run's [`lifetime::RunLifetime`].
#[derive(Clone)]
pub struct Host {
    bridge: Arc<dyn bridge::Handler>,
    run: Option<Arc<lifetime::RunLifetime>>,
}

impl Host {
    /// A host whose handed-over commands `bridge` runs.
    pub fn new(bridge: Arc<dyn bridge::Handler>) -> Self {
        Host { bridge, run: None }
    }

    /// This host for the run `run` holds once it exists: the commands its agent hands over
    /// belong to that run (see [`bridge::for_run`]).
    pub fn serving(&self, run: &tether_store::RunCell) -> Self {
        Host {
            bridge: bridge::for_run(self.bridge.clone(), run.clone()),
            run: self.run.clone(),
        }
    }
}
