//! Confinement of model-supplied paths to the workspace.
//!
//! Every file tool takes a path from the model, and a model can ask for anything: `../x`,
//! `/etc/passwd`, or a path through a symlink that points out of the repository. [`Workspace`]
//! turns such a string into the real path the tool may touch, or refuses it with a message the
//! model can act on.
//!
//! Resolution follows what the operating system would do: the longest prefix that exists is
//! resolved with `canonicalize` (so every symlink and `..` in it is followed), the rest — which
//! does not exist yet, as for a file about to be written — is appended lexically, and the result
//! must stay under the canonical root. A dangling symlink is followed by hand, so writing through
//! a link to a missing file outside the workspace is refused too.
//!
//! Resolving is the check; it is not how a file is opened. The path it returns is canonical (no
//! symlink left in it), and the tools open it by descriptor beneath the root following no
//! symlink ([`crate::beneath`], [`Workspace::open_read`], [`Workspace::open_write`]): a path
//! swapped for a symlink between the check and the open makes the open fail instead of following
//! it out.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::error::SetupError;

/// How many symlinks one resolution may follow by hand before giving up (as Linux's `ELOOP`).
const MAX_LINKS: usize = 40;

/// The `errno` of "too many levels of symbolic links" on Linux and the BSDs/macOS.
const ELOOP: [i32; 2] = [40, 62];

/// The workspace root, canonicalised once, and the rules for paths inside it.
///
/// Cheap to clone; every tool of a [`ToolSet`](crate::ToolSet) shares one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: Arc<Path>,
}

/// Why a model-supplied path was refused. The `Display` text is written for the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path leaves the workspace, lexically or through a symlink.
    #[error("`{path}` is outside the workspace {}{}; only paths inside it can be used", root.display(), via(path, resolved))]
    Outside {
        /// The path as the model gave it.
        path: String,
        /// Where it really leads.
        resolved: PathBuf,
        /// The canonical workspace root.
        root: PathBuf,
    },
    /// The path is tether's own state (`.tether/`, never readable) or, for a change, the
    /// repository's `.git` (hooks and config are code that runs later, outside any sandbox).
    #[error("`{path}` is in {what}, which the agent's tools {verb}")]
    Protected {
        /// The path as the model gave it.
        path: String,
        /// What it is in.
        what: &'static str,
        /// What the tools may not do there.
        verb: &'static str,
    },
    /// The path contains a NUL byte, which no file name can.
    #[error("`{}` is not a valid path: it contains a NUL byte", path.escape_debug())]
    Invalid {
        /// The path as the model gave it.
        path: String,
    },
    /// Symlinks in the path form a loop or a chain too long to follow.
    #[error("`{path}` cannot be resolved: too many levels of symbolic links")]
    SymlinkLoop {
        /// The path as the model gave it.
        path: String,
    },
    /// The file system refused to tell where the path leads (permissions, I/O).
    #[error("`{path}` cannot be resolved: {cause}")]
    Io {
        /// The path as the model gave it.
        path: String,
        /// What the file system said.
        cause: io::Error,
    },
}

/// ` (it resolves to …)`, when that says more than the path itself.
fn via(path: &str, resolved: &Path) -> String {
    if Path::new(path) == resolved {
        String::new()
    } else {
        format!(" (it resolves to {})", resolved.display())
    }
}

impl Workspace {
    /// Opens the workspace at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, SetupError> {
        let given = root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|cause| SetupError::Root {
            path: given.to_path_buf(),
            cause,
        })?;
        if !root.is_dir() {
            return Err(SetupError::NotADirectory { path: root });
        }
        Ok(Self { root: root.into() })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a model-supplied path — relative to the root, or absolute inside it; empty or
    /// `.` is the root — to the real path a tool may use, which need not exist yet.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        if path.contains('\0') {
            return Err(PathError::Invalid {
                path: path.to_owned(),
            });
        }
        let mut candidate = self.root.join(path);
        for _ in 0..MAX_LINKS {
            match step(&candidate) {
                Ok(Step::Resolved(real)) => return self.inside(path, real),
                Ok(Step::Again(next)) => candidate = next,
                Err(err) if is_loop(&err) => break,
                Err(cause) => {
                    return Err(PathError::Io {
                        path: path.to_owned(),
                        cause,
                    });
                }
            }
        }
        Err(PathError::SymlinkLoop {
            path: path.to_owned(),
        })
    }

    /// `real` (a resolved path) as the model should see it: relative to the root, `.` for the
    /// root itself; paths outside are shown absolute.
    pub fn display(&self, real: &Path) -> String {
        match real.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => real.display().to_string(),
        }
    }

    /// [`Workspace::resolve`] for a path a tool will change: also refused inside `.git`.
    pub fn resolve_writable(&self, path: &str) -> Result<PathBuf, PathError> {
        let real = self.resolve(path)?;
        if self.first_component(&real) == Some(".git") {
            return Err(PathError::Protected {
                path: path.to_owned(),
                what: "the repository's .git",
                verb: "may read but never change",
            });
        }
        Ok(real)
    }

    /// The first component of `real` below the root.
    fn first_component<'a>(&self, real: &'a Path) -> Option<&'a str> {
        match real.strip_prefix(&self.root).ok()?.components().next()? {
            Component::Normal(first) => first.to_str(),
            _ => None,
        }
    }

    fn inside(&self, path: &str, real: PathBuf) -> Result<PathBuf, PathError> {
        if real.starts_with(&self.root) {
            if self.first_component(&real) == Some(".tether") {
                return Err(PathError::Protected {
                    path: path.to_owned(),
                    what: "tether's own state (.tether/)",
                    verb: "can neither read nor change",
                });
            }
            Ok(real)
        } else {
            Err(PathError::Outside {
                path: path.to_owned(),
                resolved: real,
                root: self.root.to_path_buf(),
            })
        }
    }
}

impl fmt::Display for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root.display().fmt(f)
    }
}

/// One round of resolution.
enum Step {
    /// The real path: a canonical existing prefix plus a tail that does not exist.
    Resolved(PathBuf),
    /// A dangling symlink or a `..` in the missing tail changed the path; resolve it again.
    Again(PathBuf),
}

fn step(candidate: &Path) -> io::Result<Step> {
    let (prefix, tail) = split_existing(candidate);
    let real_prefix = match std::fs::canonicalize(&prefix) {
        Ok(real) => real,
        // `lstat` found the prefix but it does not resolve: its last component is a dangling
        // symlink (the components before it resolved, or `lstat` would have failed).
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            let target = std::fs::read_link(&prefix)?;
            let parent = prefix.parent().unwrap_or(Path::new("/"));
            let mut next = std::fs::canonicalize(parent)?.join(target);
            next.extend(tail);
            return Ok(Step::Again(next));
        }
        Err(err) => return Err(err),
    };
    let mut real = real_prefix;
    let mut went_up = false;
    for part in tail {
        if part == ".." {
            went_up = true;
            real.pop();
        } else if part != "." {
            real.push(part);
        }
    }
    // After a `..` the lexical result may name an existing symlink again; check it afresh.
    Ok(if went_up {
        Step::Again(real)
    } else {
        Step::Resolved(real)
    })
}

/// Splits `path` into its longest prefix that exists (without following a final symlink) and
/// the components after it.
fn split_existing(path: &Path) -> (PathBuf, Vec<OsString>) {
    let mut prefix = path.to_path_buf();
    let mut tail = Vec::new();
    while std::fs::symlink_metadata(&prefix).is_err() {
        let Some(name) = last_component(&prefix) else {
            break;
        };
        tail.push(name);
        if !prefix.pop() {
            break;
        }
    }
    tail.reverse();
    (prefix, tail)
}

fn last_component(path: &Path) -> Option<OsString> {
    match path.components().next_back()? {
        Component::Normal(name) => Some(name.to_os_string()),
        Component::ParentDir => Some("..".into()),
        Component::CurDir => Some(".".into()),
        Component::RootDir | Component::Prefix(_) => None,
    }
}

fn is_loop(err: &io::Error) -> bool {
    err.raw_os_error().is_some_and(|code| ELOOP.contains(&code))
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
