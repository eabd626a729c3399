//! tether's one tool abstraction and its built-in tools.
//!
//! - [`Tool`] is what every tool implements, built-in or tether's own (`ask_human`,
//!   `complete_goal`, the plan tools); most are written as a [`TypedTool`] — their logic over a
//!   typed argument struct — and get argument checking for free.
//! - [`ToolSet`] is the one registry: the tools an agent (or the judge) may call, by name, and
//!   their [`ToolSpec`]s, which the model clients (`tether-model`) write in each provider's wire
//!   format as they are.
//! - The built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `ls` for the agent, and the
//!   read-only `read`, `grep`, `ls` for the sign-off judge ([`ToolSet::builtin`],
//!   [`ToolSet::read_only`]).
//! - The shell spawner every child process of tether goes through ([`run_shell`],
//!   [`run_program`]): own process group, null stdin, timeout, tail capture, killed on drop.
//!
//! # Why it looks like this
//!
//! A model calls tools with whatever arguments it came up with, for hours, unattended. So:
//!
//! 1. **A tool never fails the turn for the model's mistakes.** Bad arguments, a missing file, a
//!    path outside the workspace, a command exiting non-zero: each is a [`ToolOutput`] with
//!    `is_error: true` and a message naming the field or path, and the agent tries again. Only a
//!    [`FatalToolError`] ends a turn (the agent stops and reports it), and the built-in tools
//!    never return one.
//! 2. **Paths stay in the workspace.** Every path goes through [`Workspace::resolve`], which
//!    follows symlinks and refuses anything that leads out of the root; the file it checked is
//!    then opened by descriptor from the root, following no symlink at all, so a path swapped
//!    after the check (by a process the agent left running) is an error, never a file outside.
//! 3. **Every call is bounded.** Output is capped (keeping a command's tail, where the error
//!    is), and `bash` runs with no stdin, in its own process group, under a timeout and a
//!    [`CancellationToken`](tokio_util::sync::CancellationToken), killing the whole group — see
//!    [`run_shell`].
//! 4. **Everything a model reads is stable text**, so prompts stay cacheable and the specs and
//!    outputs are snapshot-tested.
//!
//! tether's own tools join a [`ToolSet`] as `Arc<dyn Tool>`.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tether_tools::{ToolContext, ToolOptions, ToolSet};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let tools = ToolSet::builtin(dir.path(), &ToolOptions::default())?;
//! let ctx = ToolContext::default();
//!
//! let done = tools.call("write", json!({"path": "notes/a.txt", "content": "hello\n"}), &ctx).await?;
//! assert_eq!(done.output.content, "wrote 6 bytes to `notes/a.txt` (new file)");
//! assert_eq!(done.summary, "write notes/a.txt (6 bytes)");
//!
//! let read = tools.call("read", json!({"path": "notes/a.txt"}), &ctx).await?;
//! assert_eq!(read.output.content, "     1\thello\n");
//!
//! let escape = tools.call("read", json!({"path": "../secret"}), &ctx).await?;
//! assert!(escape.output.is_error);
//! assert!(escape.output.content.contains("is outside the workspace"));
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod beneath;
mod error;
pub mod gate;
mod glob;
pub mod leftovers;
mod lines;
mod options;
mod output;
pub mod process;
mod registry;
mod regular;
mod shell;
mod spec;
mod summary;
mod tail;
mod text;
mod tool;
mod tools;
mod walk;
mod workspace;

pub use error::{FatalToolError, SetupError};
pub use options::{NetworkSwitch, ToolOptions};
pub use output::{ToolCallOutcome, ToolOutput};
pub use registry::ToolSet;
pub use regular::{OpenError, Special, Written};
pub use shell::{
    LiveProgram, ProgramCommand, ProgramRun, ShellCommand, ShellEnd, ShellRun, run_exit_code,
    run_program, run_program_teed, run_program_tees, run_shell, run_shell_tee,
};
pub use spec::ToolSpec;
pub use tool::{Tool, ToolContext, TypedTool};
pub use workspace::{PathError, Workspace};
