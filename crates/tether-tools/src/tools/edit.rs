//! `edit`: replace an exact piece of text in a file.
//!
//! Exact matching (no fuzzy search) keeps edits predictable; in exchange, every way a match can
//! fail gets a message that tells the model what to do next: read the file again, add context
//! to make the match unique, or set `replace_all`.

use std::fmt::Write as _;
use std::io::Read as _;
use std::os::unix::fs::FileExt as _;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{FileLogic, FileTool, io_error, str_arg, try_out};
use crate::output::ToolOutput;
use crate::regular::{OpenError, Special};
use crate::spec::ToolSpec;
use crate::text::{looks_binary, plural, shorten};
use crate::workspace::Workspace;

/// How many lines of the changed region are shown back.
const SHOWN_LINES: usize = 12;
/// How many occurrence line numbers an ambiguity message lists.
const LISTED_LINES: usize = 10;

/// The largest file `edit` changes (16 MiB): it holds the file, and the file changed, in
/// memory; a larger one is refused before anything is read or written.
pub(crate) const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// The `edit` tool's logic.
#[derive(Debug)]
pub(crate) struct Editor {
    ws: Workspace,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    path: String,
    old_text: String,
    new_text: String,
    #[serde(default)]
    replace_all: bool,
}

/// `edit` over `ws`.
pub(crate) fn tool(ws: Workspace) -> FileTool<Editor> {
    let description = "Replace text in an existing file. `old_text` must match the file \
         exactly, including whitespace, indentation and line breaks, and must occur exactly \
         once, unless `replace_all` is true; include a few surrounding lines to make it \
         unique. Read the file first. Returns where the change was made and the changed \
         lines. To create a file or replace all of it, use `write`."
        .to_owned();
    let properties = json!({
        "path": {"type": "string", "description": "The file to edit."},
        "old_text": {"type": "string", "description": "The exact text to replace."},
        "new_text": {"type": "string", "description": "The text to put in its place."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
    });
    FileTool::new(
        ToolSpec::object(
            "edit",
            description,
            properties,
            &["path", "old_text", "new_text"],
        ),
        Editor { ws },
    )
}

impl FileLogic for Editor {
    type Args = Args;

    fn describe(args: &Value) -> String {
        format!("edit {}", str_arg(args, "path").unwrap_or("?"))
    }

    fn run(&self, args: Args) -> ToolOutput {
        run(&self.ws, args)
    }
}

fn run(ws: &Workspace, args: Args) -> ToolOutput {
    let path = args.path.as_str();
    if args.old_text.is_empty() {
        return ToolOutput::error(
            "`old_text` is empty; give the exact text to replace (to create a file, use `write`)",
        );
    }
    if args.old_text == args.new_text {
        return ToolOutput::error("`old_text` and `new_text` are the same; nothing would change");
    }
    let real = try_out!(
        ws.resolve_writable(path)
            .map_err(|e| ToolOutput::error(e.to_string()))
    );
    let file = match ws.open_edit(&real) {
        Ok(file) => file,
        Err(OpenError::NotRegular(Special::Dir)) => {
            return ToolOutput::error(format!("`{path}` is a directory, not a file"));
        }
        Err(err) => return err.output("edit", path),
    };
    let bytes = try_out!(read_capped(&file, path));
    if looks_binary(&bytes) {
        return ToolOutput::error(format!(
            "`{path}` looks like a binary file; `edit` changes text files only"
        ));
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return ToolOutput::error(format!(
            "`{path}` is not valid UTF-8; `edit` changes UTF-8 text only (use `write` to replace it)"
        ));
    };
    let starts: Vec<usize> = text
        .match_indices(&args.old_text)
        .map(|(at, _)| at)
        .collect();
    let lines: Vec<usize> = starts.iter().map(|at| line_of(&text, *at)).collect();
    match starts.len() {
        0 => return ToolOutput::error(not_found(path, &text, &args.old_text)),
        1 => {}
        n if !args.replace_all => {
            return ToolOutput::error(format!(
                "`old_text` occurs {n} times in `{path}` (at lines {}); add surrounding lines so \
                 it matches only once, or set `replace_all` to true to replace every occurrence",
                list(&lines)
            ));
        }
        _ => {}
    }
    let new = text.replace(&args.old_text, &args.new_text);
    // Through the descriptor the text was read from: the file changed is the file read.
    try_out!(
        file.set_len(0)
            .and_then(|()| file.write_all_at(new.as_bytes(), 0))
            .map_err(|e| io_error("write", path, &e))
    );

    let shown = ws.display(&real);
    let old_lines = args.old_text.lines().count().max(1);
    let new_lines = args.new_text.lines().count().max(1);
    let mut out = if starts.len() == 1 {
        format!(
            "edited `{shown}`: replaced {} at line {} with {}\n",
            plural(old_lines, "line", "lines"),
            lines[0],
            plural(new_lines, "line", "lines")
        )
    } else {
        format!(
            "edited `{shown}`: replaced {} occurrences (at lines {})\n",
            starts.len(),
            list(&lines)
        )
    };
    if starts.len() == 1 {
        excerpt(&mut out, &new, lines[0], new_lines);
    }
    ToolOutput::ok(out)
}

/// The whole of `file`, refused (nothing read into memory past the cap, nothing written) when
/// it is larger than [`MAX_EDIT_BYTES`], or grows past it while being read.
fn read_capped(file: &std::fs::File, path: &str) -> Result<Vec<u8>, ToolOutput> {
    let too_big = |size: u64| {
        ToolOutput::error(format!(
            "`{path}` is {size} bytes, more than the {MAX_EDIT_BYTES} bytes `edit` changes; \
             nothing was changed. Change a file this large with a command (`sed -i`, a script), \
             or replace it whole with `write`"
        ))
    };
    let size = file
        .metadata()
        .map_err(|e| io_error("read", path, &e))?
        .len();
    if size > MAX_EDIT_BYTES {
        return Err(too_big(size));
    }
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", path, &e))?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The 1-based line `at` (a byte offset) is on.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn list(lines: &[usize]) -> String {
    let mut out: Vec<String> = lines
        .iter()
        .take(LISTED_LINES)
        .map(usize::to_string)
        .collect();
    if lines.len() > LISTED_LINES {
        out.push(format!("and {} more", lines.len() - LISTED_LINES));
    }
    out.join(", ")
}

fn not_found(path: &str, text: &str, old: &str) -> String {
    let mut msg = format!(
        "`old_text` was not found in `{path}`. It must match the file exactly, including \
         whitespace and indentation; read the file again to see its current text."
    );
    if old.contains('\n') && !old.contains("\r\n") && text.contains("\r\n") {
        msg.push_str(" Note: the file uses CRLF (\\r\\n) line endings.");
    } else if !old.trim().is_empty() && old.trim() != old && text.contains(old.trim()) {
        msg.push_str(" Note: it does occur without its leading/trailing whitespace.");
    }
    msg
}

/// Appends the changed lines, numbered, with one line of context on each side.
fn excerpt(out: &mut String, text: &str, first: usize, count: usize) {
    let from = first.saturating_sub(1).max(1);
    let to = first + count;
    let lines: Vec<&str> = text.lines().collect();
    let last = to.min(lines.len());
    for n in from..=last {
        if n - from == SHOWN_LINES {
            let _ = writeln!(out, "   ...\t[{} more lines]", last - n + 1);
            break;
        }
        if let Some(line) = lines.get(n - 1) {
            let _ = writeln!(out, "{n:>6}\t{}", shorten(line, 200));
        }
    }
}
