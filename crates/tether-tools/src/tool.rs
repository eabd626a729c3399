//! The [`Tool`] trait: the one interface every tool implements, built-in or added later (tether's
//! `ask_human` and `complete_goal` live in other crates and join a [`ToolSet`](crate::ToolSet) as
//! `Arc<dyn Tool>`).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::FatalToolError;
use crate::output::{ToolOutput, ToolSpec};

/// A boxed, sendable future, so [`Tool`] stays usable as a trait object.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a tool call may need from the turn running it.
#[derive(Debug, Clone, Default)]
pub struct ToolContext {
    cancel: CancellationToken,
}

impl ToolContext {
    /// A context whose calls stop when `cancel` fires (Ctrl+C, `tether cancel`).
    pub fn new(cancel: CancellationToken) -> Self {
        Self { cancel }
    }

    /// Fires when the turn is cancelled; long-running tools stop and say so.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }
}

/// A tool a model can call.
///
/// Implementations never panic, and report everything the model did wrong as a [`ToolOutput`]
/// with `is_error: true` naming the field or path at fault. `Err` is only for failures that must
/// end the turn.
pub trait Tool: Send + Sync {
    /// The name, description and parameter schema shown to the model.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool with the model's arguments (normally a JSON object).
    fn call<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>>;

    /// A few words naming the call for logs (`edit src/lib.rs`, `bash: cargo test`), from
    /// arguments that may be malformed. Defaults to the tool's name.
    fn describe_call(&self, args: &Value) -> String {
        let _ = args;
        self.spec().name.clone()
    }
}
