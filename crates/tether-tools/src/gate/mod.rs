//! The gate `bash` asks before running a command: tether's `ask_before` rule.
//!
//! A goal (or `[human]` in tether.toml) lists command prefixes that need a human's yes, such as
//! `git push`. This crate knows nothing of humans or plans: `bash` holds a [`CommandGate`] when
//! one is given ([`ToolOptions::bash_gate`](crate::ToolOptions::bash_gate)) and runs a command
//! only once the gate allows it; a refusal is the tool's result, so the model reads why. The
//! gate tether uses lives above (it reads the plan and asks through the human broker); what it
//! needs to decide whether to ask — splitting a shell line into commands and matching prefixes —
//! is here, pure and tested on its own ([`check`]).

mod indirect;
mod line;
mod prefix;
#[cfg(test)]
mod tests;

use futures_util::future::BoxFuture;

pub use line::{Split, Word, split};
pub use prefix::{Verdict, check};

use crate::tool::ToolContext;

/// Decides whether `bash` may run a command.
pub trait CommandGate: Send + Sync + std::fmt::Debug {
    /// `Ok` to run `command`; `Err` with the reason (for the model) to refuse it. May wait (for
    /// a human); stops waiting when `ctx`'s cancellation fires, refusing.
    fn allow<'a>(
        &'a self,
        command: &'a str,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), String>>;
}
