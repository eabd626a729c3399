//! `read`: a text file's lines, numbered like `cat -n`, in a window the model chooses.
//!
//! The file is streamed line by line, so a huge log costs memory only for the window shown, and
//! every read is bounded whatever the file holds: at most [`MAX_LINE_BYTES`] of one line are
//! kept (a file that is one line of several GiB is shown as that line's start, with its length),
//! and at most [`MAX_SCANNED`] bytes of the file are gone through in one call (what lies past
//! them is said, with the file's size). The byte cap keeps one call from flooding the context,
//! and the footer says exactly which offset to ask for next.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read as _};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{FileLogic, FileTool, io_error, str_arg, try_out};
use crate::lines::{BoundedLines, Line};
use crate::options::ToolOptions;
use crate::output::ToolOutput;
use crate::regular::{OpenError, Special};
use crate::spec::ToolSpec;
use crate::text::{looks_binary, plural, shorten};
use crate::workspace::Workspace;

/// Lines longer than this many characters are shortened.
const MAX_LINE_CHARS: usize = 2000;

/// The most bytes of one line held in memory: room for [`MAX_LINE_CHARS`] characters of four
/// bytes each; the rest of a longer line is counted, not kept.
pub(crate) const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS;

/// The most bytes of a file one `read` call goes through (256 MiB): lines past them are neither
/// shown nor counted, and the output says so with the file's size.
pub(crate) const MAX_SCANNED: u64 = SCANNED_MIB * 1024 * 1024;

/// [`MAX_SCANNED`] in MiB, as the tool's texts say it.
const SCANNED_MIB: u64 = 256;

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
         lines over {MAX_LINE_CHARS} characters are shortened, and only a file's first \
         {SCANNED_MIB} MiB are read. When not everything is shown, the output ends with a \
         note saying which `offset` to read next. Binary files are \
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
        let size = try_out!(
            file.metadata()
                .map(|meta| meta.len())
                .map_err(|e| io_error("read", path, &e))
        );
        let mut reader = BufReader::new(file.take(MAX_SCANNED));
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
        let mut lines = BoundedLines::new(reader, MAX_LINE_BYTES);
        let mut total = 0usize;
        let mut kept = Vec::new();
        loop {
            let line = match lines.next_into(&mut kept) {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(err) => return io_error("read", path, &err),
            };
            total += 1;
            if total >= offset && total < offset.saturating_add(limit) && !window.byte_cut {
                window.push(total, &kept, line, self.max_bytes);
            }
        }
        // Past the bound there is more of the file than was gone through.
        let scan = Scan {
            size,
            stopped: lines.read() >= MAX_SCANNED && size > MAX_SCANNED,
        };
        if total == 0 {
            return ToolOutput::ok(format!("(`{path}` is empty)"));
        }
        if offset > total {
            return ToolOutput::error(scan.past_end(path, offset, total));
        }
        window.finish(path, total, self.max_bytes, scan)
    }
}

/// How much of the file was gone through.
#[derive(Debug, Clone, Copy)]
struct Scan {
    /// The file's size in bytes.
    size: u64,
    /// Whether reading stopped at [`MAX_SCANNED`] with more of the file left.
    stopped: bool,
}

impl Scan {
    /// `offset` is past the last line `read` went through.
    fn past_end(self, path: &str, offset: usize, total: usize) -> String {
        let lines = plural(total, "line", "lines");
        if self.stopped {
            format!(
                "`offset` {offset} is past what `read` goes through of `{path}`: the file is {} \
                 bytes, and `read` reads its first {SCANNED_MIB} MiB only, which hold {lines}",
                self.size
            )
        } else {
            format!("`offset` {offset} is past the end of `{path}`, which has {lines}")
        }
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
    /// Adds line `n`, of which `kept` (at most [`MAX_LINE_BYTES`]) was read, unless the output
    /// would pass `max_bytes` (the window's first line always goes in).
    fn push(&mut self, n: usize, kept: &[u8], line: Line, max_bytes: usize) {
        let mut entry = String::new();
        let _ = writeln!(entry, "{n:>6}\t{}", shown(kept, line));
        if self.out.len() + entry.len() > max_bytes && self.last >= self.first {
            self.byte_cut = true;
            return;
        }
        self.out.push_str(&entry);
        self.last = n;
    }

    fn finish(mut self, path: &str, total: usize, max_bytes: usize, scan: Scan) -> ToolOutput {
        let of = if scan.stopped {
            format!("of the {total} in its first {SCANNED_MIB} MiB")
        } else {
            format!("of {total}")
        };
        if self.last < total {
            let shown = format!("lines {}-{} {of} shown", self.first, self.last);
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
        if scan.stopped {
            let _ = writeln!(
                self.out,
                "[`{path}` is {} bytes and `read` goes through its first {SCANNED_MIB} MiB only: \
                 what follows them cannot be shown, and line {total} may go on past them]",
                scan.size
            );
        }
        ToolOutput::ok(self.out)
    }
}

/// A line as shown: its text without the line break, shortened to [`MAX_LINE_CHARS`]
/// characters; a line longer than what was kept of it says how many bytes were left out.
fn shown(kept: &[u8], line: Line) -> String {
    let text = String::from_utf8_lossy(kept);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    if line.len <= kept.len() as u64 {
        return shorten(text, MAX_LINE_CHARS).into_owned();
    }
    // Cut: the kept bytes may end inside a character (one replacement character then).
    let head: String = text.chars().take(MAX_LINE_CHARS).collect();
    let left_out = line.len.saturating_sub(head.len() as u64);
    format!("{head}… [{left_out} more bytes]")
}
