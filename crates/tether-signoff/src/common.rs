//! Lines common to many files of the repository: the other half of "is an unchanged line
//! specific?" (the first, the line's own text, is in `specific.rs`).
//!
//! A line such as `logger = logging.getLogger(__name__)` or a project's license banner holds
//! plenty of letters, yet it is in every module, so quoting it shows nothing about this work.
//! An unchanged line counts as **common** when the same line (white space collapsed) is a whole
//! line of at least [`COMMON_FILES`] *other* files of the repository.
//!
//! "The repository's files" are its tracked files (`git ls-files`); outside a git repository,
//! the workspace's regular files (a walk leaving out `.git/`, `.tether/` and symlinks, at most
//! [`MAX_LISTED`] files). The scan is bounded: files of the quoted file's extension first, then
//! the rest, at most [`MAX_PEER_FILES`] files, none larger than [`MAX_PEER_FILE_BYTES`] (larger
//! ones are skipped), [`MAX_SCAN_BYTES`] read for one quote and [`MAX_CHECK_BYTES`] for a whole
//! verdict; it stops as soon as every line asked about is common. Past the bounds a count is a
//! lower bound, so a line common only in files beyond them counts as specific.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use tether_config::STATE_DIR;
use tether_tools::Workspace as Confined;

use crate::quotes::normalize;

/// In this many other files, a line is common.
pub const COMMON_FILES: usize = 3;
/// Files read at most for one quote.
pub const MAX_PEER_FILES: usize = 2000;
/// Larger files are not read.
pub const MAX_PEER_FILE_BYTES: u64 = 512 * 1024;
/// Bytes read at most for one quote.
pub const MAX_SCAN_BYTES: u64 = 16 * 1024 * 1024;
/// Bytes read at most for all the quotes of one verdict.
pub const MAX_CHECK_BYTES: u64 = 64 * 1024 * 1024;
/// Files listed at most by the walk of a workspace that is not a git repository.
pub const MAX_LISTED: usize = 20_000;

/// The repository's files, and what was counted in them.
pub(crate) struct Peers<'a> {
    ws: &'a Confined,
    tracked: Option<Vec<PathBuf>>,
    walked: OnceCell<Vec<PathBuf>>,
    /// (the quoted file, the line) → how many other files hold it.
    counted: RefCell<HashMap<(PathBuf, String), usize>>,
    budget: Cell<u64>,
}

impl<'a> Peers<'a> {
    /// The files of the workspace `ws`: `tracked` (relative to its root) when known, else a
    /// bounded walk, made the first time it is needed.
    pub(crate) fn new(ws: &'a Confined, tracked: Option<Vec<PathBuf>>) -> Self {
        Peers {
            ws,
            tracked,
            walked: OnceCell::new(),
            counted: RefCell::new(HashMap::new()),
            budget: Cell::new(MAX_CHECK_BYTES),
        }
    }

    /// How many files other than `quoted` (relative to the root) hold each of `lines`
    /// (normalized) as a whole line, counted up to [`COMMON_FILES`].
    pub(crate) fn counts(&self, quoted: &Path, lines: &[&str]) -> Vec<usize> {
        let key = |line: &str| (quoted.to_owned(), line.to_owned());
        let missing: Vec<&str> = {
            let counted = self.counted.borrow();
            lines
                .iter()
                .copied()
                .filter(|l| !counted.contains_key(&key(l)))
                .collect()
        };
        if !missing.is_empty() {
            let found = self.scan(quoted, &missing);
            let mut counted = self.counted.borrow_mut();
            for (line, n) in missing.iter().zip(found) {
                counted.insert(key(line), n);
            }
        }
        let counted = self.counted.borrow();
        lines
            .iter()
            .map(|l| counted.get(&key(l)).copied().unwrap_or(0))
            .collect()
    }

    fn files(&self) -> &[PathBuf] {
        match &self.tracked {
            Some(files) => files,
            None => self.walked.get_or_init(|| walk(self.ws.root())),
        }
    }

    /// One bounded pass over the other files, counting those that hold each line.
    fn scan(&self, quoted: &Path, lines: &[&str]) -> Vec<usize> {
        let mut counts = vec![0usize; lines.len()];
        let ext = quoted.extension();
        let files = self.files();
        let ordered = files
            .iter()
            .filter(|p| p.extension() == ext)
            .chain(files.iter().filter(|p| p.extension() != ext))
            .filter(|p| p.as_path() != quoted && !p.starts_with(STATE_DIR));
        let mut scan_budget = MAX_SCAN_BYTES;
        for rel in ordered.take(MAX_PEER_FILES) {
            if counts.iter().all(|&n| n >= COMMON_FILES) {
                break;
            }
            let Some(text) = self.read(rel, &mut scan_budget) else {
                if scan_budget == 0 || self.budget.get() == 0 {
                    break;
                }
                continue;
            };
            let mut held = vec![false; lines.len()];
            for file_line in text.lines() {
                let file_line = normalize(file_line);
                for (i, line) in lines.iter().enumerate() {
                    held[i] |= file_line == *line;
                }
            }
            for (n, h) in counts.iter_mut().zip(held) {
                *n += usize::from(h);
            }
        }
        counts
    }

    /// A peer file's text, within both budgets: a regular file inside the workspace (never
    /// through a symlink), not too large, UTF-8.
    fn read(&self, rel: &Path, scan_budget: &mut u64) -> Option<String> {
        let real = self.ws.resolve(rel.to_str()?).ok()?;
        if real.strip_prefix(self.ws.root()).ok()? != rel {
            return None;
        }
        let meta = fs::symlink_metadata(&real).ok()?;
        if !meta.is_file() || meta.len() > MAX_PEER_FILE_BYTES {
            return None;
        }
        let len = meta.len();
        if len > *scan_budget || len > self.budget.get() {
            *scan_budget = 0;
            return None;
        }
        *scan_budget -= len;
        self.budget.set(self.budget.get() - len);
        let mut bytes = Vec::new();
        crate::quotes::open_regular(self.ws, &real)
            .ok()?
            .take(MAX_PEER_FILE_BYTES)
            .read_to_end(&mut bytes)
            .ok()?;
        String::from_utf8(bytes).ok()
    }
}

/// The regular files under `root`, relative to it, sorted: `.git/` and `.tether/` and symlinks
/// left out, at most [`MAX_LISTED`] (the first found, depth first in name order).
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(root.join(&dir)) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for entry in entries {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let rel = dir.join(entry.file_name());
            if kind.is_dir() {
                let name = entry.file_name();
                if name != ".git" && !(dir.as_os_str().is_empty() && name == STATE_DIR) {
                    subdirs.push(rel);
                }
            } else if kind.is_file() {
                if files.len() >= MAX_LISTED {
                    return files;
                }
                files.push(rel);
            }
        }
        dirs.extend(subdirs.into_iter().rev());
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::fs;
    use std::path::{Path, PathBuf};

    use tether_tools::Workspace as Confined;

    use super::{COMMON_FILES, Peers, walk};

    #[test]
    fn lines_in_many_other_files_are_counted_and_the_quoted_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for i in 0..4 {
            fs::write(
                root.join(format!("m{i}.py")),
                format!("import logging\nlogger = logging.getLogger(__name__)\nx = {i}\n"),
            )
            .unwrap();
        }
        fs::create_dir_all(root.join(".tether")).unwrap();
        fs::write(root.join(".tether/log"), "x = 1\nx = 1\n").unwrap();
        let ws = Confined::new(root).unwrap();
        let peers = Peers::new(&ws, None);
        let counts = peers.counts(
            Path::new("m0.py"),
            &["logger = logging.getLogger(__name__)", "x = 1", "x = 0"],
        );
        assert_eq!(counts, [COMMON_FILES, 1, 0]);
        // Only the files given as tracked count.
        let tracked = vec![PathBuf::from("m0.py"), PathBuf::from("m1.py")];
        let peers = Peers::new(&ws, Some(tracked));
        assert_eq!(
            peers.counts(
                Path::new("m0.py"),
                &["logger = logging.getLogger(__name__)"]
            ),
            [1]
        );
    }

    #[test]
    fn the_walk_leaves_out_git_tether_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join(".tether")).unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        for f in [
            ".git/config",
            ".tether/db",
            "src/a.rs",
            "src/deep/b.rs",
            "z.txt",
        ] {
            fs::write(root.join(f), "x\n").unwrap();
        }
        std::os::unix::fs::symlink(root.join("z.txt"), root.join("link.txt")).unwrap();
        let files: Vec<String> = walk(root).iter().map(|p| p.display().to_string()).collect();
        assert_eq!(files, ["src/a.rs", "src/deep/b.rs", "z.txt"]);
    }
}
