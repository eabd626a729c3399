//! The six built-in tools, one module each, and what they share: building a spec, running file
//! work off the async runtime, and turning I/O errors into messages for the model.

use std::io;

use serde_json::{Map, Value, json};

use crate::output::{ToolOutput, ToolSpec};

pub(crate) mod bash;
pub(crate) mod edit;
pub(crate) mod grep;
pub(crate) mod ls;
pub(crate) mod read;
pub(crate) mod write;

/// A spec whose parameters are an object of `properties`, `required` ones listed, nothing else.
pub(crate) fn spec(
    name: &str,
    description: String,
    properties: Value,
    required: &[&str],
) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description,
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}

/// Runs blocking file work on tokio's blocking pool.
pub(crate) async fn blocking<F>(work: F) -> ToolOutput
where
    F: FnOnce() -> ToolOutput + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(output) => output,
        Err(err) => ToolOutput::error(format!(
            "internal error: the tool stopped unexpectedly ({err})"
        )),
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
