//! The one tool abstraction: [`Tool`], the interface every tool implements and a
//! [`ToolSet`](crate::ToolSet) serves, and [`TypedTool`], the way to write one as its logic over
//! typed arguments.
//!
//! Built-in or not (tether's `ask_human`, `complete_goal` and the plan tools live in other
//! crates), a tool joins a set as `Arc<dyn Tool>`. Almost every tool is written as a
//! [`TypedTool`]: it names its argument struct, and the blanket [`Tool`] implementation checks
//! the model's JSON against the schema, deserialises it, and turns a mismatch into an error
//! result naming the field — so no tool repeats that.

use std::future::Future;

use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::args;
use crate::error::FatalToolError;
use crate::output::ToolOutput;
use crate::spec::ToolSpec;

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
/// with `is_error: true` naming the field or path at fault. `Err` is only for failures the model
/// cannot fix, and it ends the agent's turn (see [`FatalToolError`]).
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

/// A tool written as its logic over typed arguments; it is a [`Tool`] through a blanket
/// implementation that checks and deserialises the model's arguments first.
///
/// Arguments that do not fit the schema or the struct never reach [`run`](TypedTool::run): the
/// model gets an error result naming the field. A `null` field reads as absent.
pub trait TypedTool: Send + Sync {
    /// The arguments, deserialised from the model's JSON object.
    type Args: DeserializeOwned + Send;

    /// The name, description and parameter schema shown to the model.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool with arguments that fit its schema.
    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, FatalToolError>> + Send;

    /// As [`Tool::describe_call`]: a few words naming the call, from arguments that may be
    /// malformed.
    fn describe_call(&self, args: &Value) -> String {
        let _ = args;
        self.spec().name.clone()
    }
}

impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    fn call<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async move {
            match args::parse(TypedTool::spec(self), args) {
                Ok(args) => self.run(args, ctx).await,
                Err(output) => Ok(output),
            }
        })
    }

    fn describe_call(&self, args: &Value) -> String {
        TypedTool::describe_call(self, args)
    }
}
