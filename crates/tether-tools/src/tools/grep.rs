//! `grep`: search file contents under the workspace with a regular expression.
//!
//! One multi-line regex runs over each whole file and each match is mapped back to its line, so
//! a file without a match costs one scan; a line with a match is reported once and the search
//! goes on after it, so a file that is one long line of matches costs one scan too. Every read
//! is bounded: a file over `grep_max_file_bytes` (10 MiB by default) is skipped, and said. The
//! walk is sorted and skips what [`crate::walk`] skips, so results are stable from call to call.

use std::fmt::Write as _;

use regex_lite::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{FileLogic, FileTool, io_error, str_arg, try_out};
use crate::glob::Glob;
use crate::options::ToolOptions;
use crate::output::ToolOutput;
use crate::regular;
use crate::spec::ToolSpec;
use crate::text::{looks_binary, plural, shorten};
use crate::walk::{self, FileAt};
use crate::workspace::Workspace;

/// Matching lines are shortened to this many characters.
const MAX_LINE_CHARS: usize = 300;

/// The `grep` tool's logic.
#[derive(Debug)]
pub(crate) struct Searcher {
    ws: Workspace,
    default_results: usize,
    max_results: usize,
    max_file_bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
    max_results: Option<usize>,
}

/// `grep` over `ws`, with the limits of `options`.
pub(crate) fn tool(ws: Workspace, options: &ToolOptions) -> FileTool<Searcher> {
    let max_results = options.grep_max_results.max(1);
    let default_results = options.grep_default_results.clamp(1, max_results);
    let description = format!(
        "Search the contents of files in the workspace with a regular expression (Rust regex \
         syntax, no look-around or backreferences; `^` and `$` match at line ends). Returns \
         matching lines as `path:line: text`, at most `max_results` (default \
         {default_results}, at most {max_results}). `path` limits the search to a file or \
         directory; `glob` filters files by name (`*.rs`, `*.{{ts,tsx}}`) or, if it contains \
         `/`, by path from the workspace root (`src/**/*.rs`). Binary files and the \
         directories {} are skipped unless `path` points inside one.",
        walk::SKIPPED_DIRS.join(", ")
    );
    let properties = json!({
        "pattern": {"type": "string", "description": "The regular expression to search for."},
        "path": {"type": "string", "description": "A file or directory to search (default: the whole workspace)."},
        "glob": {"type": "string", "description": "Only search files matching this glob."},
        "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
        "max_results": {"type": "integer", "minimum": 1, "description": "How many matching lines to return at most."},
    });
    FileTool::new(
        ToolSpec::object("grep", description, properties, &["pattern"]),
        Searcher {
            ws,
            default_results,
            max_results,
            max_file_bytes: options.grep_max_file_bytes,
        },
    )
}

impl FileLogic for Searcher {
    type Args = Args;

    fn describe(args: &Value) -> String {
        let pattern = crate::text::first_line(str_arg(args, "pattern").unwrap_or("?"), 40);
        match str_arg(args, "path") {
            Some(path) => format!("grep `{pattern}` in {path}"),
            None => format!("grep `{pattern}`"),
        }
    }

    fn run(&self, args: Args) -> ToolOutput {
        let regex = try_out!(
            RegexBuilder::new(&args.pattern)
                .case_insensitive(args.case_insensitive)
                .multi_line(true)
                .crlf(true)
                .build()
                .map_err(|e| ToolOutput::error(format!(
                    "`pattern` is not a valid regular expression: {e}"
                )))
        );
        let glob = match &args.glob {
            Some(glob) => Some(try_out!(Glob::new(glob).map_err(ToolOutput::error))),
            None => None,
        };
        let path = args.path.as_deref().unwrap_or(".");
        let start = try_out!(
            self.ws
                .resolve(path)
                .map_err(|e| ToolOutput::error(e.to_string()))
        );
        let start = match walk::start(&self.ws, &start) {
            Ok(start) => start,
            Err(err) => return io_error("search", path, &err),
        };
        let mut limit = args.max_results.unwrap_or(self.default_results).max(1);
        let mut notes = String::new();
        if limit > self.max_results {
            let max = self.max_results;
            let _ = writeln!(
                notes,
                "[max_results {limit} is above the limit of {max}; used {max}]"
            );
            limit = self.max_results;
        }
        let mut found = Found {
            out: String::new(),
            count: 0,
            limit,
            full: false,
            too_big: 0,
        };
        walk::files(start, &mut |file| {
            let rel = self.ws.display(file.path);
            if glob.as_ref().is_none_or(|g| g.matches(&rel)) {
                self.search_file(file, &rel, &regex, &mut found);
            }
            !found.full
        });
        let mut text = found.out;
        if found.count == 0 {
            let within = args
                .glob
                .as_deref()
                .map(|g| format!(" (files matching `{g}`)"))
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "no matches for `{}` in `{path}`{within}",
                args.pattern
            );
        }
        if found.full {
            let _ = writeln!(
                text,
                "[stopped at {limit} matches; narrow `pattern`, `path` or `glob`, or raise \
                 `max_results` (at most {})]",
                self.max_results
            );
        }
        if found.too_big > 0 {
            let _ = writeln!(
                text,
                "[{} over {} bytes not searched]",
                plural(found.too_big, "file", "files"),
                self.max_file_bytes
            );
        }
        text.push_str(&notes);
        let note = plural(found.count, "match", "matches");
        ToolOutput::ok(text).with_note(if found.full {
            format!("{note}, capped")
        } else {
            note
        })
    }
}

impl Searcher {
    fn search_file(&self, file: &FileAt<'_>, rel: &str, regex: &Regex, found: &mut Found) {
        // Only regular files, opened without blocking and through no symlink: a FIFO, a device
        // or a file swapped for a symlink is skipped.
        let Ok(opened) = file.open() else {
            return;
        };
        let size = opened.metadata().map_or(0, |meta| meta.len());
        let read = (size <= self.max_file_bytes)
            .then(|| regular::read_bounded(opened, self.max_file_bytes));
        let Some(read) = read else {
            found.too_big += 1;
            return;
        };
        let Ok((bytes, more)) = read else {
            return;
        };
        // It grew while being read.
        if more {
            found.too_big += 1;
            return;
        }
        if looks_binary(&bytes) {
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        found.lines_of(&text, regex, rel);
    }
}

/// The matches so far.
struct Found {
    out: String,
    count: usize,
    limit: usize,
    full: bool,
    too_big: usize,
}

impl Found {
    /// Adds each line of `text` (the file `rel`) where a match of `regex` starts, until the
    /// limit. Once a line is reported the search goes on after it: a line is gone through a
    /// bounded number of times however many matches it holds (a file that is one long line of
    /// matches costs one pass, not one per match).
    fn lines_of(&mut self, text: &str, regex: &Regex, rel: &str) {
        // The search starts at `at`; line numbers are counted up to `counted`.
        let (mut at, mut counted, mut line_no) = (0usize, 0usize, 1usize);
        while at <= text.len() {
            let Some(m) = regex.find_at(text, at) else {
                return;
            };
            line_no += newlines(&text[counted..m.start()]);
            counted = m.start();
            let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
            let end = text[m.start()..]
                .find('\n')
                .map_or(text.len(), |i| m.start() + i);
            let line = text[start..end].trim_end_matches('\r');
            let _ = writeln!(
                self.out,
                "{rel}:{line_no}: {}",
                shorten(line, MAX_LINE_CHARS)
            );
            self.count += 1;
            if self.count == self.limit {
                self.full = true;
                return;
            }
            // On from the next line (or from the match's end, when it spans lines).
            at = (end + 1).max(m.end());
        }
    }
}

/// How many line breaks `text` holds.
fn newlines(text: &str) -> usize {
    text.bytes().filter(|b| *b == b'\n').count()
}
