//! What the built-in agent needs from its tools: their specs for the model, and a way to call
//! one by name. Keeping this a small trait lets the agent take the workspace tools, tether's own
//! in-process tools, or a test's stand-ins alike.

use serde_json::Value;
use tether_model::ToolSpec;
use tokio_util::sync::CancellationToken;

use crate::executor::BoxFuture;

/// The result of one tool call, as the model and the journal see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// What goes back to the model.
    pub content: String,
    /// Whether it is an error the model should react to.
    pub is_error: bool,
    /// One short line for logs and events (`edit src/lib.rs`).
    pub summary: String,
}

/// A set of tools the agent may call.
pub trait ToolBox: Send + Sync {
    /// The tools, as the model is told about them.
    fn specs(&self) -> Vec<ToolSpec>;

    /// Calls the tool `name` with `arguments`. Unknown names and bad arguments are error
    /// results for the model, never failures of the turn.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolResult>;
}
