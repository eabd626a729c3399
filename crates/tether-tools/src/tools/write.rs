//! `write`: create or replace a whole file, making its parent directories.
//!
//! The target is resolved through [`Workspace`] first (refused outside the workspace and in
//! `.git`), then it and every directory to be created are opened or made by descriptor beneath
//! the root, never through a symlink ([`Workspace::open_write`]): a parent swapped for a symlink
//! after the check cannot carry the write out of the workspace or into `.git/hooks`.

use std::io::Write as _;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{FileLogic, FileTool, io_error, str_arg, try_out};
use crate::output::ToolOutput;
use crate::regular::{OpenError, Special};
use crate::spec::ToolSpec;
use crate::text::plural;
use crate::workspace::Workspace;

/// The `write` tool's logic.
#[derive(Debug)]
pub(crate) struct Writer {
    ws: Workspace,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    path: String,
    content: String,
}

/// `write` over `ws`.
pub(crate) fn tool(ws: Workspace) -> FileTool<Writer> {
    let description = "Create a file in the workspace, or replace a file's whole content, \
         with `content`; missing parent directories are created. To change part of an \
         existing file, use `edit` instead. Returns the number of bytes written. `path` is \
         relative to the workspace root, or absolute inside it."
        .to_owned();
    let properties = json!({
        "path": {"type": "string", "description": "The file to write."},
        "content": {"type": "string", "description": "The file's complete new content."},
    });
    FileTool::new(
        ToolSpec::object("write", description, properties, &["path", "content"]),
        Writer { ws },
    )
}

impl FileLogic for Writer {
    type Args = Args;

    fn describe(args: &Value) -> String {
        format!("write {}", str_arg(args, "path").unwrap_or("?"))
    }

    fn run(&self, args: Args) -> ToolOutput {
        run(&self.ws, args)
    }
}

fn run(ws: &Workspace, args: Args) -> ToolOutput {
    let path = args.path.as_str();
    let real = try_out!(
        ws.resolve_writable(path)
            .map_err(|e| ToolOutput::error(e.to_string()))
    );
    let written = match ws.open_write(&real) {
        Ok(written) => written,
        Err(OpenError::NotRegular(Special::Dir)) => {
            return ToolOutput::error(format!(
                "`{path}` is a directory; give a file path to write"
            ));
        }
        Err(err) => return err.output("write", path),
    };
    let before = written.before;
    let mut file = written.file;
    try_out!(
        file.write_all(args.content.as_bytes())
            .map_err(|e| io_error("write", path, &e))
    );
    let bytes = args.content.len();
    let what = match before {
        None => "new file".to_owned(),
        Some(old) => format!("replaced {old} bytes"),
    };
    let size = plural(bytes, "byte", "bytes");
    ToolOutput::ok(format!("wrote {size} to `{}` ({what})", ws.display(&real))).with_note(size)
}
