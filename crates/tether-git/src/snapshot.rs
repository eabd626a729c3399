//! A snapshot of a work tree: its files as a git tree of tether's snapshot repository, bounded.
//!
//! 1. **List** the candidates: `git ls-files -z --others --exclude-standard` against an empty
//!    private index (every file not ignored, tether's state directory left out), read whole up
//!    to [`LIST_BYTES`] — a listing past that fails the snapshot, it is never taken in part.
//! 2. **Look** at each in process (`lstat`, never following a symlink): regular files up to
//!    [`FILE_BYTES`] and symlinks are kept; a larger file (a sparse file of a few GiB would
//!    take git half a minute to hash), a FIFO, a device, a socket, a nested repository's
//!    directory and a name that is not UTF-8 are left out and reported ([`Skipped`]).
//! 3. **Add** what was kept to the private index (`git update-index --add --remove -z
//!    --stdin`) and **write** it as a tree (`git write-tree`).
//!
//! A snapshot over a base tree (a commit's parent, [`Snapshots::snapshot_over`]) starts its
//! index from that tree and lists its files too: a file gone from the work tree is removed, and a
//! file left out keeps the base's version — a commit never drops a large file it did not change.
//!
//! Every step is bounded in time (the repository's timeout) and runs as
//! [`crate::Snapshots::run`] runs git: tether's configuration only, in the sandbox.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

use tokio_util::sync::CancellationToken;

use crate::{GitError, ObjectId, Snapshots, excludes};

/// The most bytes of the listing of candidate files read (NUL-separated names).
pub const LIST_BYTES: usize = 64 * 1024 * 1024;
/// The largest file a snapshot holds.
pub const FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A work tree's files, as a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The tree.
    pub tree: ObjectId,
    /// The files it holds, relative to the work tree.
    pub files: Vec<String>,
    /// The files left out, and why.
    pub skipped: Vec<Skipped>,
}

/// A file a snapshot left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its path relative to the work tree (lossy when not UTF-8).
    pub path: String,
    /// Why.
    pub why: Skip,
}

/// Why a file was left out of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Larger than [`FILE_BYTES`] (its size).
    TooLarge(u64),
    /// Not a regular file nor a symlink (a FIFO, a device, a socket, a nested repository's
    /// directory).
    NotAFile(&'static str),
    /// Its name is not UTF-8.
    NotUtf8,
    /// It could not be looked at.
    Unreadable,
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::TooLarge(bytes) => write!(
                f,
                "{} MiB, over the {} MiB a snapshot holds",
                bytes / (1024 * 1024),
                FILE_BYTES / (1024 * 1024)
            ),
            Skip::NotAFile(kind) => f.write_str(kind),
            Skip::NotUtf8 => f.write_str("its name is not UTF-8"),
            Skip::Unreadable => f.write_str("it could not be looked at"),
        }
    }
}

impl Snapshots {
    /// Snapshots the work tree (see the module's documentation).
    pub async fn snapshot(&self, cancel: &CancellationToken) -> Result<Snapshot, GitError> {
        let index = self.scratch("index");
        let taken = self.snapshot_into(&index, None, cancel).await;
        let _ = std::fs::remove_file(&index);
        taken
    }

    /// [`Snapshots::snapshot`] over the tree `base` (see the module's documentation), leaving
    /// the index it built at `index` (a path from [`Snapshots::index_path`]) for the caller.
    pub async fn snapshot_over(
        &self,
        base: &ObjectId,
        index: &Path,
        cancel: &CancellationToken,
    ) -> Result<Snapshot, GitError> {
        self.snapshot_into(index, Some(base), cancel).await
    }

    async fn snapshot_into(
        &self,
        index: &Path,
        base: Option<&ObjectId>,
        cancel: &CancellationToken,
    ) -> Result<Snapshot, GitError> {
        let _ = std::fs::remove_file(index);
        let index_var = crate::command::path_str(index)?;
        if let Some(base) = base {
            let read = self
                .command(&["read-tree", base.as_str()])
                .env("GIT_INDEX_FILE", index_var.clone());
            self.ok(&read, cancel).await?;
        }
        let names = self.candidates(index, base.is_some(), cancel).await?;
        let Looked {
            files,
            gone,
            skipped,
        } = self.look(&names);
        for s in &skipped {
            tracing::debug!(path = %s.path, why = %s.why, "left out of the snapshot");
        }
        if !files.is_empty() || !gone.is_empty() {
            let mut input = Vec::new();
            for file in files.iter().chain(&gone) {
                input.extend_from_slice(file.as_bytes());
                input.push(0);
            }
            let add = self
                .command(&["update-index", "--add", "--remove", "-z", "--stdin"])
                .env("GIT_INDEX_FILE", index_var.clone())
                .input(input);
            self.ok(&add, cancel).await?;
        }
        let write = self
            .command(&["write-tree"])
            .env("GIT_INDEX_FILE", index_var);
        let out = self.ok(&write, cancel).await?;
        let tree = ObjectId::parse(out.stdout.trim()).ok_or_else(|| GitError::Failed {
            what: write.describe(),
            stderr: format!("not a tree id: {}", out.stdout.trim()),
        })?;
        Ok(Snapshot {
            tree,
            files,
            skipped,
        })
    }

    /// A path for an index of the caller's, in the repository's `tmp/` (where a sandboxed git
    /// may write it).
    pub fn index_path(&self) -> std::path::PathBuf {
        self.scratch("index")
    }

    /// The names git lists as candidates, whole: the files not ignored, and with `tracked` the
    /// files of the index too.
    async fn candidates(
        &self,
        index: &Path,
        tracked: bool,
        cancel: &CancellationToken,
    ) -> Result<Vec<Vec<u8>>, GitError> {
        let patterns = self.scratch("exclude");
        let written = std::fs::write(
            &patterns,
            excludes::patterns(
                &self.work_tree,
                self.person.as_deref(),
                &self.env_remove,
                cancel,
            )
            .await,
        );
        if let Err(source) = written {
            return Err(GitError::Private {
                path: patterns,
                source,
            });
        }
        let exclude_from = format!("--exclude-from={}", crate::command::path_str(&patterns)?);
        let state = self
            .state_in_tree
            .as_ref()
            .map(|rel| format!(":(exclude,top,literal){rel}"));
        let mut args = vec!["ls-files", "-z", "--others"];
        if tracked {
            args.push("--cached");
        }
        args.extend(["--exclude-standard", exclude_from.as_str(), "--", "."]);
        if let Some(state) = &state {
            args.push(state);
        }
        let list = self
            .command(&args)
            .env("GIT_INDEX_FILE", crate::command::path_str(index)?)
            .whole(LIST_BYTES);
        let listed = self.ok(&list, cancel).await;
        let _ = std::fs::remove_file(&patterns);
        let bytes = listed?.bytes.unwrap_or_default();
        Ok(bytes
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .filter(|n| !self.in_state_dir(n))
            .map(<[u8]>::to_vec)
            .collect())
    }

    /// Whether `name` lies in tether's state directory (left out even when an agent's
    /// `.gitignore` un-ignores it: the pathspec says so to git, this says so again).
    fn in_state_dir(&self, name: &[u8]) -> bool {
        self.state_in_tree.as_ref().is_some_and(|rel| {
            name.strip_prefix(rel.as_bytes())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
        })
    }

    /// Which of `names` a snapshot holds, which are gone, and which it leaves out.
    fn look(&self, names: &[Vec<u8>]) -> Looked {
        let mut looked = Looked {
            files: Vec::with_capacity(names.len()),
            gone: Vec::new(),
            skipped: Vec::new(),
        };
        for name in names {
            let Ok(text) = std::str::from_utf8(name) else {
                looked.skipped.push(Skipped {
                    path: String::from_utf8_lossy(name).into_owned(),
                    why: Skip::NotUtf8,
                });
                continue;
            };
            if looked.files.last().is_some_and(|last| last == text) {
                // An index entry listed again (its stages): once is enough.
                continue;
            }
            let path = self.work_tree.join(Path::new(OsStr::from_bytes(name)));
            match kept(&path) {
                Ok(()) => looked.files.push(text.to_owned()),
                Err(None) => looked.gone.push(text.to_owned()),
                Err(Some(why)) => looked.skipped.push(Skipped {
                    path: text.to_owned(),
                    why,
                }),
            }
        }
        looked
    }
}

/// What looking at the candidates found.
struct Looked {
    /// Kept.
    files: Vec<String>,
    /// Listed, and gone since (removed from an index that had them).
    gone: Vec<String>,
    /// Left out.
    skipped: Vec<Skipped>,
}

/// Whether the file at `path` goes into a snapshot, by `lstat` (a symlink is kept as a link):
/// `Err(None)` when it is not there.
fn kept(path: &Path) -> Result<(), Option<Skip>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(_) => return Err(Some(Skip::Unreadable)),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Ok(());
    }
    if kind.is_file() {
        return if meta.len() > FILE_BYTES {
            Err(Some(Skip::TooLarge(meta.len())))
        } else {
            Ok(())
        };
    }
    Err(Some(Skip::NotAFile(if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_dir() {
        "a directory (a nested repository)"
    } else {
        "not a regular file"
    })))
}
