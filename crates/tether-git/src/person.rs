//! What a git command on a person's own repository may reach in its sandbox: the work tree, the
//! git directory and the directory every worktree shares (with the objects it borrows) readable;
//! written, only what the command must write ([`Writes`]) — never the git directory's `hooks/`
//! nor its `config`, nor a ref but the run's branch: no command of tether's needs to.
//!
//! Those commands are a `--worktree` run's (`tether-worktree`): adding, locking, listing and
//! pruning worktrees, reading a ref or a key, moving the run's branch, and the commit that runs
//! the person's hooks when they asked for them. Each one's configuration is neutralised
//! ([`crate::neutral`]); the sandbox is the second wall, for what git might still be made to
//! run: the network off, `/tmp`, `/run` and the home directory covered, every capability
//! dropped, and writes only where the command writes.
//!
//! Finding the repository ([`crate::discover`]) reads only the directory it starts from and the
//! `.git` of each directory above it (with what a `.git` file points at), so git can look for
//! the repository as it always does, and sees nothing else of the person's files.

use std::path::{Path, PathBuf};

use crate::GitError;
use crate::command::GitCommand;
use crate::confine::Reach;
use crate::repo::GitRepo;

/// What a git command on a person's repository may write. Everything else of the repository it
/// reads at most.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Writes {
    /// Nothing: a command that only reads (`rev-parse`, `config --get`, `show-ref`,
    /// `worktree list`, the listing of drivers).
    #[default]
    Nothing,
    /// git's records of the linked worktrees (`worktrees/` of the shared git directory):
    /// `worktree lock`, `unlock`, `prune`. The `.git` file of every worktree the records name is
    /// kept visible, so `prune` drops only the records of worktrees that are really gone.
    Records,
    /// A new linked worktree at `dir` (made beforehand, empty) on `branch` (a full ref name,
    /// `refs/heads/…`, which it may create): the records (`worktrees/`), the directory of that
    /// branch's ref and of its log, and `dir`.
    NewWorktree {
        /// The new worktree's directory.
        dir: PathBuf,
        /// Its branch.
        branch: String,
    },
    /// The ref given (a full name, `refs/heads/…`) and its log (`update-ref`): their
    /// directories, and a linked worktree's own git directory (its `HEAD`'s log, when the ref is
    /// its `HEAD`'s branch).
    Ref(String),
    /// A commit with the person's hooks (`git commit` in a linked worktree) on the branch given
    /// (a full ref name): the objects, that branch's ref and log, the worktree's own git
    /// directory (its index, its `HEAD`'s log, the message) and its work tree (a hook may
    /// rewrite a file before it is committed). The main checkout's own git directory is the
    /// repository's: a commit there is not granted.
    Commit(String),
}

/// The most worktrees whose `.git` files a `prune` keeps visible: past it, the command is
/// refused rather than run blind to some of them.
const MAX_RECORDS: usize = 200;
/// The longest `gitdir` record or `.git` file read.
const POINTER_BYTES: u64 = 4096;

impl GitRepo {
    /// What `cmd` may reach in its sandbox; the directories it must write made first when
    /// missing (`worktrees/`, the branch's directories under `refs/` and `logs/`: git would make
    /// them, in a directory it may not write).
    pub(crate) fn reach(&self, cmd: &GitCommand) -> Result<Reach, GitError> {
        let common = &self.common_dir;
        let own = (self.git_dir != *common).then_some(&self.git_dir);
        let mut reach = Reach {
            read: vec![self.git_dir.clone(), common.clone()],
            read_if_present: vec![self.work_tree.clone(), cmd.cwd.clone()],
            ..Reach::default()
        };
        reach
            .read
            .extend(crate::private::borrowed(&common.join("objects")));
        let mut write: Vec<PathBuf> = Vec::new();
        match &cmd.writes {
            Writes::Nothing => {}
            Writes::Records => {
                write.push(common.join("worktrees"));
                reach.read_if_present.extend(recorded(common)?);
            }
            Writes::NewWorktree { dir, branch } => {
                made(&common.join("worktrees"))?;
                write.push(common.join("worktrees"));
                write.extend(ref_dirs(common, branch)?);
                write.push(dir.clone());
            }
            Writes::Ref(name) => {
                write.extend(ref_dirs(common, name)?);
                write.extend(own.cloned());
            }
            Writes::Commit(branch) => {
                write.extend(ref_dirs(common, branch)?);
                write.push(common.join("objects"));
                write.extend(own.cloned());
                write.push(self.work_tree.clone());
            }
        }
        if let Some(scratch) = &cmd.scratch {
            write.push(scratch.clone());
            reach.tmp = Some(scratch.clone());
        }
        // Only what is there can be granted (`reftable/` is there in a reftable repository).
        write.retain(|path| path.exists());
        reach.write = write;
        Ok(reach)
    }
}

/// The directories git writes the ref `name` (`refs/heads/tether/r-1`) and its log in, made
/// when missing: `refs/heads/tether/` and `logs/refs/heads/tether/` of `common` (a ref is
/// written as a lock file beside it, then renamed), and `reftable/` in a repository that keeps
/// its refs there. A name that is not a plain `refs/…` path is refused.
fn ref_dirs(common: &Path, name: &str) -> Result<Vec<PathBuf>, GitError> {
    let parent = name
        .rsplit_once('/')
        .map(|(parent, _)| parent)
        .filter(|parent| {
            parent.starts_with("refs/")
                && parent
                    .split('/')
                    .all(|part| !part.is_empty() && !part.starts_with('.'))
        })
        .ok_or_else(|| GitError::Refused {
            why: format!("{name:?} is not a ref tether writes"),
        })?;
    let mut dirs = Vec::new();
    for base in [common.to_path_buf(), common.join("logs")] {
        made(&base)?;
        let mut at = base;
        for part in parent.split('/') {
            at.push(part);
            made(&at)?;
        }
        dirs.push(at);
    }
    let reftable = common.join("reftable");
    if reftable.is_dir() {
        dirs.push(reftable);
    }
    Ok(dirs)
}

/// What looking for the repository `dir` is in may read: `dir`, and the `.git` of `dir` and of
/// each directory above it — a `.git` file with the git directory it names and that one's
/// shared directory. git stats the rest of the way as it looks (which no sandbox hides); it
/// reads nothing else.
pub(crate) fn discovery(dir: &Path) -> Reach {
    let mut reach = Reach {
        read_if_present: vec![dir.to_path_buf()],
        ..Reach::default()
    };
    let start = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    for above in start.ancestors() {
        let dot_git = above.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        if meta.is_file()
            && let Some(named) = pointer(&dot_git, b"gitdir:")
        {
            if let Some(shared) = pointer(&named.join("commondir"), b"") {
                reach.read_if_present.push(shared);
            }
            reach.read_if_present.push(named);
        }
        reach.read_if_present.push(dot_git);
    }
    reach
}

/// The variables that make git in the sandbox stop looking for the repository where it would
/// stop outside: at the first directory above `dir` on another file system. In the sandbox,
/// every path it may read is a mount of its own beneath the covers, which git would take for a
/// file system's edge; so git is told to cross them (`GIT_DISCOVERY_ACROSS_FILESYSTEM`) and
/// given the real edge, found here, as its ceiling (`GIT_CEILING_DIRECTORIES`).
pub(crate) fn discovery_edge(dir: &Path) -> Vec<(String, String)> {
    use std::os::unix::fs::MetadataExt as _;
    let mut env = vec![("GIT_DISCOVERY_ACROSS_FILESYSTEM".to_owned(), "1".to_owned())];
    let Ok(start) = std::fs::canonicalize(dir) else {
        return env;
    };
    let Ok(device) = std::fs::metadata(&start).map(|m| m.dev()) else {
        return env;
    };
    let edge = start
        .ancestors()
        .skip(1)
        .find(|above| std::fs::metadata(above).is_ok_and(|m| m.dev() != device));
    if let Some(edge) = edge.and_then(Path::to_str) {
        env.push(("GIT_CEILING_DIRECTORIES".to_owned(), edge.to_owned()));
    }
    env
}

/// The path the small file at `file` names after `prefix` (`gitdir: <path>`, a `commondir`),
/// relative to the file's directory unless absolute.
fn pointer(file: &Path, prefix: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = crate::bounded::read(file, POINTER_BYTES, false)?;
    let line = bytes.split(|b| *b == b'\n').next()?;
    let named = line.strip_prefix(prefix)?.trim_ascii();
    if named.is_empty() {
        return None;
    }
    let named = Path::new(std::ffi::OsStr::from_bytes(named));
    Some(file.parent()?.join(named))
}

/// The `.git` files of the worktrees `common`'s records name (regular files named `.git`, as a
/// linked worktree's is), which `git worktree prune` must see to keep their records.
fn recorded(common: &Path) -> Result<Vec<PathBuf>, GitError> {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(named) = pointer(&entry.path().join("gitdir"), b"") else {
            continue;
        };
        let is_dot_git = named.file_name().is_some_and(|n| n == ".git");
        if is_dot_git && std::fs::symlink_metadata(&named).is_ok_and(|m| m.is_file()) {
            out.push(named);
        }
        if out.len() > MAX_RECORDS {
            return Err(GitError::Refused {
                why: format!(
                    "the repository records more than {MAX_RECORDS} worktrees, more than its \
                     sandbox can keep in sight"
                ),
            });
        }
    }
    Ok(out)
}

/// Makes the directory `path` when it is missing (not through a symlink).
fn made(path: &Path) -> Result<(), GitError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(GitError::Refused {
            why: format!("{} is not a directory", path.display()),
        }),
        Err(_) => std::fs::create_dir(path).map_err(|source| GitError::Refused {
            why: format!("{} could not be made: {source}", path.display()),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_branch_grants_the_directories_of_its_ref_and_its_log_only() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path();
        let got = ref_dirs(common, "refs/heads/tether/r-1").unwrap();
        assert_eq!(
            got,
            [
                common.join("refs/heads/tether"),
                common.join("logs/refs/heads/tether")
            ]
        );
        assert!(got.iter().all(|d| d.is_dir()));
        for bad in [
            "HEAD",
            "refs",
            "refs/../config/x",
            "refs/.x/y",
            "hooks/x",
            "refs//x",
        ] {
            assert!(
                matches!(ref_dirs(common, bad), Err(GitError::Refused { .. })),
                "{bad}"
            );
        }
    }
}
