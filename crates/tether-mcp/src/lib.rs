//! tether's MCP server: `ask_human`, the plan's status, `complete_goal` and `cancel_goal` for
//! any MCP client (Claude Code, Codex, pi, …), spoken over stdio by `tether mcp`.
//!
//! Inside a `tether run` the questions are filed under that run; alone it is a standalone
//! human-in-the-loop server. Questions go to the same human desk as the built-in agent's
//! ([`tether_human::Desk`]): the store (so `tether answer` from any shell wakes it at once) and
//! Zulip when configured — never the terminal, since stdin and stdout carry the protocol; a
//! client that can show forms (the `elicitation` capability) is asked too, in its own prompt. The
//! store is opened by the first tool that needs it and shared by all of them. Nothing but
//! protocol is written to stdout; logs go to stderr.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tether_mcp::ServeError> {
//! use std::time::Duration;
//! use tether_mcp::{Options, TetherMcp};
//!
//! let ws = tether_config::Workspace::discover(std::path::Path::new("."));
//! let schema = tether_human::registry::schema();
//! let config = tether_config::load(&schema, ws.root(), &tether_config::ProcessEnv)
//!     .map(|l| l.config)
//!     .map_err(|e| e.to_string());
//! let store = std::sync::Arc::new(tether_store::EmbeddedFile(ws.db_path()));
//! let server = TetherMcp::new(Options {
//!     workspace: ws,
//!     store,
//!     config,
//!     run: Ok(None),
//!     progress_every: Duration::from_secs(30),
//!     extra: tether_mcp::ExtraTools::default(),
//!     notice_grace: tether_human::DELIVERY_GRACE,
//!     verify_sandbox: tether_mcp::VerifySandbox::fixed(tether_mcp::Sandboxes::default()),
//! });
//! tether_mcp::serve_stdio(server).await
//! # }
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod ask;
mod elicit;
mod extra;
mod goals;
mod in_flight;
mod rounds;
mod schema;
mod server;
mod status;
mod stdio;
mod verify_sandbox;

pub use extra::ExtraTools;
pub use schema::{STANDARD_FORMATS, unknown_formats};
pub use server::{ALWAYS_LOAD, Options, TetherMcp};
pub use status::{GoalStatus, PlanStatus, ProblemAt, StatusCounts};
pub use stdio::{ServeError, serve_io, serve_stdio};
pub use verify_sandbox::{Sandboxes, VerifySandbox};
