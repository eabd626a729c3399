//! Executors: who does the work in a tether loop.
//!
//! The loops hand an [`Executor`] one turn at a time — a prompt, in a fresh context or
//! continuing the agent's last session ([`Context`]) — and watch what it does through a
//! [`TurnObserver`]. These executors implement it today:
//!
//! - [`BuiltinAgent`]: tether's own agent, a model (`tether-model`) calling the tools of a
//!   `tether_tools::ToolSet` — the registry itself, no adapter in between — until it answers
//!   without a tool call. A tool's fatal failure ends the turn ([`ExecError::Tool`]).
//! - [`CommandExecutor`]: any program as the agent, run per turn through `tether-tools`'
//!   process spawner (own process group, timeout, killed on drop).
//!
//! - [`ClaudeExecutor`]: Claude Code (`claude -p`) per turn, its stream-json output turned into
//!   tether's events, tether's own tools served to it over MCP by `tether mcp`.
//! - [`CodexExecutor`]: the Codex CLI (`codex exec --json`) per turn, the same way.
//! - [`PiExecutor`]: the pi coding agent (`pi --mode json -p`) per turn, the same way, with a
//!   per-run pi agent directory carrying tether's MCP server.
//!
//! - [`AcpExecutor`]: any agent speaking the Agent Client Protocol, kept running for the run,
//!   a fresh session per turn (or the last one, continued), its permission requests decided by
//!   a [`PermissionDesk`].
//!   Gemini CLI (`kind = "gemini"`) and Copilot CLI (`kind = "copilot"`) are agent CLIs tether
//!   knows by name that run on it, each with its ACP arguments and options.
//!
//! What the agent-CLI executors share — settings, the version check, MCP wiring, the JSON-lines
//! reader, usage-limit recognition — is in [`cli`], so each CLI is only its own command line
//! and stream format.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod acp;
mod builtin;
mod claude;
pub mod cli;
mod codex;
mod command;
mod copilot;
mod executor;
mod gemini;
mod opencode;
mod pi;
pub mod prompts;
mod qwen;
mod session;

pub use acp::{AcpExecutor, McpRoute, PermissionAsk, PermissionDesk, PermissionVerdict};
pub use builtin::{BuiltinAgent, DEFAULT_MAX_STEPS};
pub use claude::{
    ClaudeExecutor, TOOLS as CLAUDE_TOOLS, UNATTENDED as CLAUDE_UNATTENDED,
    gate_settings as claude_gate_settings,
};
pub use cli::{Agent, CliError, CliSettings, RunId};
pub use codex::CodexExecutor;
pub use codex::provider::provider_key as codex_provider_key;
pub use command::{CommandError, CommandExecutor};
pub use executor::{
    Access, AgentEvent, Context, ExecError, Executor, Turn, TurnObserver, TurnOutcome, TurnRequest,
    Turns,
};
pub use pi::provider::provider_key as pi_provider_key;
pub use pi::{PiExecutor, READ_ONLY_TOOLS as PI_READ_ONLY_TOOLS};
