//! Walking the workspace for `grep` and `ls`: sorted, never following symlinks (a symlinked
//! directory could lead out of the workspace, or round in a loop), and skipping the directories
//! that are never what a model is looking for.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Directories not searched or entered unless the model points inside one explicitly.
pub(crate) const SKIPPED_DIRS: [&str; 4] = [".git", ".tether", "target", "node_modules"];

pub(crate) fn is_skipped(name: &OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|skip| name == OsStr::new(skip))
}

/// One entry of a directory, as `lstat` sees it.
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    pub(crate) kind: Kind,
}

/// What an entry is, without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    Symlink,
    Other,
}

/// The entries of `dir`, sorted by name.
pub(crate) fn entries(dir: &Path) -> io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = match entry.file_type() {
            Ok(ty) if ty.is_symlink() => Kind::Symlink,
            Ok(ty) if ty.is_dir() => Kind::Dir,
            Ok(ty) if ty.is_file() => Kind::File,
            _ => Kind::Other,
        };
        out.push(Entry {
            path: entry.path(),
            kind,
        });
    }
    out.sort_by(|a, b| a.path.file_name().cmp(&b.path.file_name()));
    Ok(out)
}

/// Calls `visit` for every regular file under `start` (or `start` itself if it is a file) until
/// it returns `false`: sorted, a directory's files before its subdirectories. Unreadable
/// directories are skipped.
pub(crate) fn files(start: &Path, visit: &mut dyn FnMut(&Path) -> bool) {
    if start.is_file() {
        visit(start);
        return;
    }
    let mut stack = vec![start.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(list) = entries(&dir) else { continue };
        let mut subdirs = Vec::new();
        for entry in list {
            match entry.kind {
                Kind::File if !visit(&entry.path) => return,
                Kind::Dir if !entry.path.file_name().is_some_and(is_skipped) => {
                    subdirs.push(entry.path);
                }
                _ => {}
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
}
