//! The composition of a run: every part a run is built from and what drives it, for any front
//! end. Nothing here is one command's: the engines of single commands ([`crate::engines`]) use
//! these parts, never the other way round.
//!
//! - [`store`]: which store a workspace's commands use (the workspace's SQLite file, or the
//!   team's PostgreSQL database).
//! - [`agents`]: which agent does the work, found by its `[executor] kind`; [`executor`] the
//!   executor `[executor]` names.
//! - [`sandbox`]: the one place a run's sandboxes are built; [`bridge`] how the tether commands
//!   the agent runs inside reach the process driving the run (what they record belongs to the
//!   run it serves); [`agent_key`] the model key an agent CLI's own configuration names;
//!   [`reach`] what the agent reaches, so the human desk takes no answer on a channel the agent
//!   could answer on itself; [`asking`] a person asked at the workspace's desk from outside any
//!   run.
//! - [`lifetime`]: nothing a run started outlives it (the run's PID namespace).
//! - [`worktree`]: a run in a git worktree of its own, and the commit per signed-off goal.
//! - [`process`]: what a process running agents does first (its keys out of its environment,
//!   itself out of its children's reach).
//! - [`budget`]: a stopped run's budgets raised before it is resumed.
//! - [`bounds`]: the run's whole configuration, as a run is taken up.
//! - [`fleet`]: a run of many goals at once, each goal a run of its own in its own worktree,
//!   merged back into the run's integration branch.
//! - [`launch`]: a run composed from all of the above and driven on the caller's Tokio
//!   runtime, with a handle to watch, interrupt or cancel it; [`report`] the report it leaves
//!   (also `tether report`'s); [`served`] the runs a server (the dashboard of `tether serve`)
//!   starts and resumes; [`scheduler`] the schedules and the scheduler beside it, firing
//!   runs through the same [`served::Runs`].

pub mod agent_key;
pub mod agents;
pub mod asking;
pub mod bounds;
pub mod bridge;
pub mod budget;
pub mod executor;
pub mod fleet;
pub mod launch;
pub mod lifetime;
pub mod process;
pub mod reach;
pub mod report;
pub mod sandbox;
pub mod scheduler;
pub mod served;
pub mod store;
pub mod worktree;
