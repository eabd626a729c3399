//! Executors: who does the work in a tether loop.
//!
//! The loops hand an [`Executor`] one turn at a time — a prompt, in a fresh context — and watch
//! what it does through a [`TurnObserver`]. The built-in agent and the drivers for external agent
//! CLIs implement the same trait, so the loops do not care which one runs.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod builtin;
mod command;
mod executor;
pub mod prompts;
mod toolbox;
mod workspace_tools;

pub use builtin::{BuiltinAgent, DEFAULT_MAX_STEPS};
pub use command::{CommandError, CommandExecutor};
pub use toolbox::{ToolBox, ToolResult};
pub use workspace_tools::WorkspaceTools;

pub use executor::{
    AgentEvent, BoxFuture, ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest,
};
