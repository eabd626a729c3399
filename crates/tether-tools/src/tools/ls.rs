//! `ls`: a sorted listing of a directory, optionally a few levels deep.
//!
//! Paths are printed relative to the workspace root, so any line can be passed back as a `path`.
//! Directories that are never worth listing (see [`crate::walk`]) are shown but not entered, so
//! the model knows they exist without paying for their contents.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{FileLogic, FileTool, io_error, str_arg, try_out};
use crate::options::ToolOptions;
use crate::output::ToolOutput;
use crate::spec::ToolSpec;
use crate::walk::{self, Dir, Kind, Start};
use crate::workspace::Workspace;

/// The `ls` tool's logic.
#[derive(Debug)]
pub(crate) struct Lister {
    ws: Workspace,
    max_entries: usize,
    max_depth: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    path: Option<String>,
    depth: Option<usize>,
}

/// `ls` over `ws`, with the limits of `options`.
pub(crate) fn tool(ws: Workspace, options: &ToolOptions) -> FileTool<Lister> {
    let max_depth = options.ls_max_depth.max(1);
    let max_entries = options.ls_max_entries.max(1);
    let description = format!(
        "List a directory in the workspace (default: the root). Entries are sorted and shown \
         as paths from the workspace root, directories with a trailing `/`, symlinks as \
         `path -> target`. `depth` (default 1, at most {max_depth}) also lists the contents \
         of subdirectories that many levels down. The directories {} are shown but not \
         entered unless `path` points inside one. At most {max_entries} entries.",
        walk::SKIPPED_DIRS.join(", ")
    );
    let properties = json!({
        "path": {"type": "string", "description": "The directory to list (default: the workspace root)."},
        "depth": {"type": "integer", "minimum": 1, "description": "How many levels to list (default 1)."},
    });
    FileTool::new(
        ToolSpec::object("ls", description, properties, &[]),
        Lister {
            ws,
            max_entries,
            max_depth,
        },
    )
}

impl FileLogic for Lister {
    type Args = Args;

    fn describe(args: &Value) -> String {
        format!("ls {}", str_arg(args, "path").unwrap_or("."))
    }

    fn run(&self, args: Args) -> ToolOutput {
        let path = args.path.as_deref().unwrap_or(".");
        let start = try_out!(
            self.ws
                .resolve(path)
                .map_err(|e| ToolOutput::error(e.to_string()))
        );
        let dir = match walk::start(&self.ws, &start) {
            Ok(Start::Dir(dir)) => dir,
            Ok(_) => return ToolOutput::ok(format!("{}\n", self.ws.display(&start))),
            Err(err) => return io_error("list", path, &err),
        };
        let mut depth = args.depth.unwrap_or(1).max(1);
        let mut notes = String::new();
        if depth > self.max_depth {
            let _ = writeln!(
                notes,
                "[depth {depth} is above the limit of {}; used {}]",
                self.max_depth, self.max_depth
            );
            depth = self.max_depth;
        }
        let mut listing = Listing {
            out: String::new(),
            count: 0,
            full: false,
        };
        if let Err(err) = self.list(&dir, depth, &mut listing) {
            return io_error("list", path, &err);
        }
        let mut text = listing.out;
        if listing.count == 0 {
            let _ = writeln!(text, "(`{path}` is empty)");
        }
        if listing.full {
            let _ = writeln!(
                text,
                "[stopped at {} entries; list a subdirectory or use a smaller depth]",
                self.max_entries
            );
        }
        text.push_str(&notes);
        ToolOutput::ok(text)
    }
}

impl Lister {
    fn list(&self, dir: &Dir, depth: usize, listing: &mut Listing) -> std::io::Result<()> {
        for entry in dir.entries()? {
            if listing.count == self.max_entries {
                listing.full = true;
                return Ok(());
            }
            let rel = self.ws.display(&entry.path);
            listing.count += 1;
            match entry.kind {
                Kind::Dir if walk::is_skipped(&entry.name) => {
                    let _ = writeln!(listing.out, "{rel}/ (not listed)");
                }
                Kind::Dir => {
                    let _ = writeln!(listing.out, "{rel}/");
                    // An unreadable subdirectory (or one swapped for a symlink) is listed, just
                    // not entered.
                    if depth > 1
                        && let Ok(sub) = dir.subdir(&entry.name)
                    {
                        let _ = self.list(&sub, depth - 1, listing);
                    }
                }
                Kind::Symlink => {
                    let target = dir.read_link(&entry.name).map(|t| t.display().to_string());
                    let _ = writeln!(
                        listing.out,
                        "{rel} -> {}",
                        target.unwrap_or_else(|_| "?".into())
                    );
                }
                Kind::File | Kind::Other => {
                    let _ = writeln!(listing.out, "{rel}");
                }
            }
            if listing.full {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// The entries so far.
struct Listing {
    out: String,
    count: usize,
    full: bool,
}
