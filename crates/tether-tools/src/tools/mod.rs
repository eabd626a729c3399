//! The six built-in tools, one module each, and what the five file tools share: a file tool is
//! its logic ([`FileLogic`]) — synchronous work over typed arguments — and [`FileTool`] runs it
//! off the async runtime, on tokio's blocking pool.

use std::io;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::FatalToolError;
use crate::output::ToolOutput;
use crate::spec::ToolSpec;
use crate::tool::{ToolContext, TypedTool};

pub(crate) mod bash;
pub(crate) mod edit;
pub(crate) mod grep;
pub(crate) mod ls;
pub(crate) mod read;
pub(crate) mod write;

/// What a file tool does: blocking file-system work over its typed arguments.
pub(crate) trait FileLogic: Send + Sync + 'static {
    /// The arguments, deserialised from the model's JSON object.
    type Args: DeserializeOwned + Send + 'static;

    /// Does the work; every failure is an error output for the model.
    fn run(&self, args: Self::Args) -> ToolOutput;

    /// A few words naming the call, from arguments that may be malformed.
    fn describe(args: &Value) -> String;
}

/// A file tool: its spec, and its logic run on tokio's blocking pool.
pub(crate) struct FileTool<L> {
    spec: ToolSpec,
    logic: Arc<L>,
}

impl<L: FileLogic> FileTool<L> {
    pub(crate) fn new(spec: ToolSpec, logic: L) -> Self {
        Self {
            spec,
            logic: Arc::new(logic),
        }
    }
}

impl<L: FileLogic> TypedTool for FileTool<L> {
    type Args = L::Args;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: L::Args, _ctx: &ToolContext) -> Result<ToolOutput, FatalToolError> {
        let logic = Arc::clone(&self.logic);
        Ok(
            match tokio::task::spawn_blocking(move || logic.run(args)).await {
                Ok(output) => output,
                Err(err) => ToolOutput::error(format!(
                    "internal error: the tool stopped unexpectedly ({err})"
                )),
            },
        )
    }

    fn describe_call(&self, args: &Value) -> String {
        L::describe(args)
    }
}

/// A string argument of possibly malformed arguments, for call summaries.
pub(crate) fn str_arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.as_object()
        .and_then(|object: &Map<String, Value>| object.get(name))
        .and_then(Value::as_str)
}

/// `verb` `path` failed with `err`, said for the model.
pub(crate) fn io_error(verb: &str, path: &str, err: &io::Error) -> ToolOutput {
    if crate::beneath::is_swap(err) {
        return crate::regular::swapped(verb, path);
    }
    ToolOutput::error(match err.kind() {
        io::ErrorKind::NotFound => format!("`{path}` does not exist"),
        io::ErrorKind::PermissionDenied => format!("cannot {verb} `{path}`: permission denied"),
        io::ErrorKind::NotADirectory => {
            format!("cannot {verb} `{path}`: a part of the path is a file, not a directory")
        }
        io::ErrorKind::IsADirectory => format!("cannot {verb} `{path}`: it is a directory"),
        _ => format!("cannot {verb} `{path}`: {err}"),
    })
}

/// Stops a tool body at the first error output: `let x = try_out!(expr);` where `expr` is a
/// `Result<T, ToolOutput>`.
macro_rules! try_out {
    ($e:expr) => {
        match $e {
            Ok(value) => value,
            Err(output) => return output,
        }
    };
}
pub(crate) use try_out;
