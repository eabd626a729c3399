//! `write`: create or replace a whole file, making its parent directories.
//!
//! The target and every directory to be created are resolved through [`Workspace`] first, so a
//! symlinked parent cannot carry the write out of the workspace.

use std::fs;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{blocking, io_error, spec, str_arg, try_out};
use crate::args;
use crate::error::FatalToolError;
use crate::output::{ToolOutput, ToolSpec};
use crate::text::plural;
use crate::tool::{BoxFuture, Tool, ToolContext};
use crate::workspace::Workspace;

/// The `write` tool.
#[derive(Debug, Clone)]
pub struct WriteTool {
    ws: Workspace,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

impl WriteTool {
    /// `write` over `ws`.
    pub fn new(ws: Workspace) -> Self {
        let description = "Create a file in the workspace, or replace a file's whole content, \
             with `content`; missing parent directories are created. To change part of an \
             existing file, use `edit` instead. Returns the number of bytes written. `path` is \
             relative to the workspace root, or absolute inside it."
            .to_owned();
        let properties = json!({
            "path": {"type": "string", "description": "The file to write."},
            "content": {"type": "string", "description": "The file's complete new content."},
        });
        Self {
            ws,
            spec: spec("write", description, properties, &["path", "content"]),
        }
    }
}

fn run(ws: &Workspace, args: Args) -> ToolOutput {
    let path = args.path.as_str();
    let real = try_out!(
        ws.resolve(path)
            .map_err(|e| ToolOutput::error(e.to_string()))
    );
    if real.is_dir() {
        return ToolOutput::error(format!(
            "`{path}` is a directory; give a file path to write"
        ));
    }
    if let Some(parent) = real.parent() {
        try_out!(fs::create_dir_all(parent).map_err(|e| io_error(
            "create the directory for",
            path,
            &e
        )));
    }
    let before = fs::metadata(&real).ok().map(|meta| meta.len());
    try_out!(fs::write(&real, &args.content).map_err(|e| io_error("write", path, &e)));
    let bytes = args.content.len();
    let what = match before {
        None => "new file".to_owned(),
        Some(old) => format!("replaced {old} bytes"),
    };
    let size = plural(bytes, "byte", "bytes");
    ToolOutput::ok(format!("wrote {size} to `{}` ({what})", ws.display(&real))).with_note(size)
}

impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async move {
            let args: Args = match args::parse(&self.spec, args) {
                Ok(args) => args,
                Err(output) => return Ok(output),
            };
            let ws = self.ws.clone();
            Ok(blocking(move || run(&ws, args)).await)
        })
    }

    fn describe_call(&self, args: &Value) -> String {
        format!("write {}", str_arg(args, "path").unwrap_or("?"))
    }
}
