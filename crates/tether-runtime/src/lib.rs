//! Composing a tether run, for any front end: from a workspace, its configuration and what to
//! run, the runtime builds the store, the executor, the run's sandbox, the human desk, the
//! worktree and the loop, and hands back what drives, watches and cancels it. The `tether`
//! binary is one front end (it parses arguments and prints); a long-lived server is another.
//!
//! - [`schema()`]: the one schema of `tether.toml`, the core tables and every table the
//!   integrations declare (each channel's and sink's), which every configuration is loaded with.
//! - [`store`]: which store a workspace's commands use (the workspace's SQLite file, or the
//!   team's PostgreSQL database).
//! - [`executor`]: the executor `[executor]` names; [`drafting`] the restricted one plan mode
//!   drafts with.
//! - [`sandbox`]: the one place a run's sandboxes are built; [`bridge`] how the tether commands
//!   the agent runs inside reach the process driving the run (what they record belongs to the
//!   run it serves); [`agent_key`] the model key an agent CLI's own configuration names;
//!   [`reach`] what the agent reaches, so the human desk takes no answer on a channel the agent
//!   could answer on itself.
//! - [`worktree`]: a run in a git worktree of its own, and the commit per signed-off goal.
//! - [`gate`]: the decision of `tether gate`, the hook that holds an agent CLI's command for
//!   `[human] ask_before`.
//! - [`mcp`]: `tether mcp`'s server composed.
//! - [`ask`]: a question asked from a shell, and who answered told.
//! - [`signoff`]: a goal signed off by a person (`tether goal complete`).
//! - [`plan`]: the flags on a plan's goals only the store can tell.
//! - [`push`]: a workspace's history copied into the team store.
//! - [`demo`]: `tether demo`'s run, with scripted models.
//! - [`judge_test`]: the judge measured on the corpus (`tether judge test`).
//! - [`process`]: what a process running agents does first (its keys out of its environment,
//!   itself out of its children's reach).
//! - [`status`]: a run's status as a person reads it.
//! - [`doctor`]: the checks of the setup `tether doctor` prints.
//! - [`budget`]: a stopped run's budgets raised before it is resumed.
//! - [`bounds`]: the run's whole configuration, as a run is taken up.
//! - [`launch`]: a run composed from all of the above and driven on the caller's Tokio
//!   runtime, with a handle to watch, interrupt or cancel it; [`report`] the report it leaves;
//!   [`served`] the runs a server (the dashboard of `tether serve`) starts and resumes.
//!
//! Errors are [`Error`]s, each saying whether a person must fix something
//! ([`Error::is_usage`]).

pub mod agent_key;
pub mod agents;
pub mod ask;
pub mod bounds;
pub mod bridge;
pub mod budget;
pub mod demo;
pub mod doctor;
pub mod drafting;
mod error;
pub mod executor;
pub mod gate;
pub mod judge_test;
pub mod launch;
pub mod lifetime;
pub mod mcp;
pub mod plan;
pub mod process;
pub mod push;
pub mod reach;
pub mod report;
pub mod sandbox;
mod schema;
pub mod served;
pub mod signoff;
pub mod status;
pub mod store;
pub mod worktree;

use std::sync::Arc;

pub use error::{Error, Result};
pub use schema::{agents, declared, schema};

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
