//! `read`: a text file's lines, numbered like `cat -n`, in a window the model chooses.
//!
//! The file is streamed line by line, so a huge log costs memory only for the window shown; the
//! byte cap keeps one call from flooding the context, and the footer says exactly which offset
//! to ask for next.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{FileLogic, FileTool, io_error, str_arg, try_out};
use crate::options::ToolOptions;
use crate::output::ToolOutput;
use crate::regular::{OpenError, Special};
use crate::spec::ToolSpec;
use crate::text::{looks_binary, plural, shorten};
use crate::workspace::Workspace;

/// Lines longer than this many characters are shortened.
const MAX_LINE_CHARS: usize = 2000;

/// The `read` tool's logic.
#[derive(Debug)]
pub(crate) struct Reader {
    ws: Workspace,
    default_lines: usize,
    max_bytes: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

/// `read` over `ws`, with the limits of `options`.
pub(crate) fn tool(ws: Workspace, options: &ToolOptions) -> FileTool<Reader> {
    let description = format!(
        "Read a text file in the workspace. Returns its lines numbered like `cat -n` (the \
         numbers and the tab after them are not part of the file). Shows up to `limit` lines \
         (default {}) starting at line `offset` (1-based, default 1), and at most {} bytes; \
         lines over {MAX_LINE_CHARS} characters are shortened. When not everything is shown, \
         the output ends with a note saying which `offset` to read next. Binary files are \
         refused; use `ls` for directories. `path` is relative to the workspace root, or \
         absolute inside it.",
        options.read_default_lines, options.read_max_bytes
    );
    let properties = json!({
        "path": {"type": "string", "description": "The file to read."},
        "offset": {"type": "integer", "minimum": 1, "description": "The first line to show (1-based)."},
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show at most."},
    });
    FileTool::new(
        ToolSpec::object("read", description, properties, &["path"]),
        Reader {
            ws,
            default_lines: options.read_default_lines.max(1),
            max_bytes: options.read_max_bytes.max(1),
        },
    )
}

impl FileLogic for Reader {
    type Args = Args;

    fn describe(args: &Value) -> String {
        format!("read {}", str_arg(args, "path").unwrap_or("?"))
    }

    fn run(&self, args: Args) -> ToolOutput {
        let path = args.path.as_str();
        let real = try_out!(
            self.ws
                .resolve(path)
                .map_err(|e| ToolOutput::error(e.to_string()))
        );
        let file = match self.ws.open_read(&real) {
            Ok(file) => file,
            Err(OpenError::NotRegular(Special::Dir)) => {
                return ToolOutput::error(format!("`{path}` is a directory; use `ls` to list it"));
            }
            Err(err) => return err.output("read", path),
        };
        let mut reader = BufReader::new(file);
        match reader.fill_buf() {
            Ok(start) if looks_binary(start) => {
                return ToolOutput::error(format!(
                    "`{path}` looks like a binary file (it has NUL bytes); `read` shows text files only"
                ));
            }
            Ok(_) => {}
            Err(err) => return io_error("read", path, &err),
        }
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(self.default_lines).max(1);
        let mut window = Window {
            out: String::new(),
            first: offset,
            last: 0,
            byte_cut: false,
        };
        let mut total = 0usize;
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(err) => return io_error("read", path, &err),
            }
            total += 1;
            if total >= offset && total < offset.saturating_add(limit) && !window.byte_cut {
                window.push(total, &line, self.max_bytes);
            }
        }
        if total == 0 {
            return ToolOutput::ok(format!("(`{path}` is empty)"));
        }
        if offset > total {
            return ToolOutput::error(format!(
                "`offset` {offset} is past the end of `{path}`, which has {}",
                plural(total, "line", "lines")
            ));
        }
        window.finish(total, self.max_bytes)
    }
}

/// The lines being shown.
struct Window {
    out: String,
    first: usize,
    last: usize,
    byte_cut: bool,
}

impl Window {
    fn push(&mut self, n: usize, raw: &[u8], max_bytes: usize) {
        let text = String::from_utf8_lossy(raw);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        let mut entry = String::new();
        let _ = writeln!(entry, "{n:>6}\t{}", shorten(text, MAX_LINE_CHARS));
        if self.out.len() + entry.len() > max_bytes && self.last >= self.first {
            self.byte_cut = true;
            return;
        }
        self.out.push_str(&entry);
        self.last = n;
    }

    fn finish(mut self, total: usize, max_bytes: usize) -> ToolOutput {
        if self.last < total {
            let shown = format!("lines {}-{} of {total} shown", self.first, self.last);
            let next = self.last + 1;
            let _ = if self.byte_cut {
                writeln!(
                    self.out,
                    "[output cut at {max_bytes} bytes: {shown}; read more with offset={next}]"
                )
            } else {
                writeln!(self.out, "[{shown}; read more with offset={next}]")
            };
        }
        ToolOutput::ok(self.out)
    }
}
