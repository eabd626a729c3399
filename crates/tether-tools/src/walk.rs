//! Walking the workspace for `grep` and `ls`: by directory descriptor, sorted, never following
//! symlinks, and skipping the directories that are never what a model is looking for.
//!
//! The start is opened beneath the root as [`crate::beneath`] opens everything; each directory
//! below it is opened from its parent's descriptor with `O_NOFOLLOW`, and each file from its
//! directory's. So a directory swapped for a symlink while the walk runs is not entered, and a
//! file swapped for one is not read: a symlinked directory could lead out of the workspace, or
//! round in a loop. Symlinks are listed (`ls`), never followed.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag, readlinkat};
use nix::sys::stat::{Mode, SFlag, fstat, fstatat};

use crate::beneath::{Beneath, open_in};
use crate::regular::{OpenError, open_read_in};
use crate::workspace::Workspace;

/// Directories not searched or entered unless the model points inside one explicitly.
pub(crate) const SKIPPED_DIRS: [&str; 4] = [".git", ".tether", "target", "node_modules"];

/// How deep a walk goes below its start: each level holds a descriptor open, and a tree made
/// deeper than any path can name must not exhaust them.
pub(crate) const MAX_DEPTH: usize = 128;

pub(crate) fn is_skipped(name: &OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|skip| name == OsStr::new(skip))
}

/// One entry of a directory, as `lstat` sees it.
pub(crate) struct Entry {
    pub(crate) name: OsString,
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

/// An open directory of the workspace and its real path (for display).
pub(crate) struct Dir {
    fd: OwnedFd,
    pub(crate) path: PathBuf,
}

/// Where a walk starts: a directory, a regular file (its directory and name), or anything else.
pub(crate) enum Start {
    Dir(Dir),
    File { dir: OwnedFd, path: PathBuf },
    Other,
}

/// A file met by a walk, not opened yet.
pub(crate) struct FileAt<'a> {
    pub(crate) path: &'a Path,
    dir: BorrowedFd<'a>,
    name: &'a OsStr,
}

impl FileAt<'_> {
    /// Opens it for reading; refused unless it is (still) a regular file.
    pub(crate) fn open(&self) -> Result<File, OpenError> {
        open_read_in(self.dir, self.name)
    }
}

/// Opens `real` (a path [`Workspace::resolve`] returned) beneath the root to walk it.
pub(crate) fn start(ws: &Workspace, real: &Path) -> io::Result<Start> {
    let rel = ws.relative(real)?;
    let beneath = Beneath::new(ws.root())?;
    let fd = beneath.open(rel, OFlag::O_PATH)?;
    let kind = SFlag::from_bits_truncate(fstat(&fd)?.st_mode) & SFlag::S_IFMT;
    Ok(if kind == SFlag::S_IFDIR {
        Start::Dir(Dir {
            fd: nix::fcntl::openat(&fd, ".", list_flags(), Mode::empty())?,
            path: real.to_path_buf(),
        })
    } else if kind == SFlag::S_IFREG && rel.file_name().is_some() {
        let parent = rel.parent().unwrap_or(Path::new(""));
        Start::File {
            dir: beneath.dir(parent, false)?,
            path: real.to_path_buf(),
        }
    } else {
        Start::Other
    })
}

fn list_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC
}

impl Dir {
    /// The entries, sorted by name.
    pub(crate) fn entries(&self) -> io::Result<Vec<Entry>> {
        let mut list = nix::dir::Dir::openat(&self.fd, ".", list_flags(), Mode::empty())?;
        let mut out = Vec::new();
        for entry in list.iter() {
            let entry = entry?;
            let bytes = entry.file_name().to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let name = OsStr::from_bytes(bytes).to_os_string();
            let kind = match entry.file_type() {
                Some(ty) => kind_of(ty),
                None => self.lstat(&name),
            };
            out.push(Entry {
                path: self.path.join(&name),
                name,
                kind,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The subdirectory `name`, unless it is (now) a symlink.
    pub(crate) fn subdir(&self, name: &OsStr) -> io::Result<Dir> {
        Ok(Dir {
            fd: open_in(&self.fd, name, list_flags(), Mode::empty())?,
            path: self.path.join(name),
        })
    }

    /// Where the symlink `name` points.
    pub(crate) fn read_link(&self, name: &OsStr) -> io::Result<PathBuf> {
        Ok(readlinkat(&self.fd, name)?.into())
    }

    fn file<'a>(&'a self, entry: &'a Entry) -> FileAt<'a> {
        FileAt {
            path: &entry.path,
            dir: self.fd.as_fd(),
            name: &entry.name,
        }
    }

    fn lstat(&self, name: &OsStr) -> Kind {
        match fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => {
                let ty = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
                if ty == SFlag::S_IFLNK {
                    Kind::Symlink
                } else if ty == SFlag::S_IFDIR {
                    Kind::Dir
                } else if ty == SFlag::S_IFREG {
                    Kind::File
                } else {
                    Kind::Other
                }
            }
            Err(_) => Kind::Other,
        }
    }
}

fn kind_of(ty: nix::dir::Type) -> Kind {
    match ty {
        nix::dir::Type::Symlink => Kind::Symlink,
        nix::dir::Type::Directory => Kind::Dir,
        nix::dir::Type::File => Kind::File,
        _ => Kind::Other,
    }
}

/// Calls `visit` for every regular file under `start` (or `start` itself if it is a file) until
/// it returns `false`: sorted, a directory's files before its subdirectories, at most
/// [`MAX_DEPTH`] levels down. Unreadable directories are skipped.
pub(crate) fn files(start: Start, visit: &mut dyn FnMut(&FileAt<'_>) -> bool) {
    let top = match start {
        Start::File { dir, path } => {
            if let Some(name) = path.file_name() {
                visit(&FileAt {
                    path: &path,
                    dir: dir.as_fd(),
                    name,
                });
            }
            return;
        }
        Start::Other => return,
        Start::Dir(dir) => dir,
    };
    let mut stack: Vec<(Dir, std::vec::IntoIter<OsString>)> = Vec::new();
    let Some(subdirs) = visit_files(&top, visit) else {
        return;
    };
    stack.push((top, subdirs.into_iter()));
    loop {
        let deep = stack.len() > MAX_DEPTH;
        let next = match stack.last_mut() {
            None => return,
            Some((dir, pending)) => pending
                .next()
                .map(|name| (!deep).then(|| dir.subdir(&name))),
        };
        match next {
            None => {
                stack.pop();
            }
            Some(Some(Ok(sub))) => {
                let Some(subdirs) = visit_files(&sub, visit) else {
                    return;
                };
                stack.push((sub, subdirs.into_iter()));
            }
            // Too deep, or not a directory any more.
            Some(_) => {}
        }
    }
}

/// Visits the files of `dir`; its subdirectories to walk next, or `None` once `visit` says stop.
fn visit_files(dir: &Dir, visit: &mut dyn FnMut(&FileAt<'_>) -> bool) -> Option<Vec<OsString>> {
    let Ok(list) = dir.entries() else {
        return Some(Vec::new());
    };
    let mut subdirs = Vec::new();
    for entry in &list {
        match entry.kind {
            Kind::File if !visit(&dir.file(entry)) => return None,
            Kind::Dir if !is_skipped(&entry.name) => subdirs.push(entry.name.clone()),
            _ => {}
        }
    }
    Some(subdirs)
}
