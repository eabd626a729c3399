//! A person's own repository, pinned: its git directory and work tree, found once and then
//! named to git every time (`GIT_DIR`, `GIT_WORK_TREE`), so git never looks for a repository
//! in the tree again — not a `.git` the agent made with `git init`, not a submodule's `.git`
//! file the agent pointed elsewhere, not a linked worktree's `.git` file it replaced.
//!
//! Only what must act on the person's repository runs here: a `--worktree` run's worktree and
//! the branch its commits land on (`tether-worktree`). Snapshots and diffs of a workspace run in
//! tether's own repository ([`crate::Snapshots`]), which reads no configuration of theirs.
//! Every command here runs with the configuration neutralised and, unless the person turned the
//! run's sandbox off, in a sandbox of its own that grants what the command must write and no
//! more ([`crate::Writes`]); when that sandbox cannot be built, the command does not run.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use crate::command::{GitCommand, GitOutput, Setting, exec};
use crate::{Confinement, GitError, drivers, neutral, user};

/// A repository's git directory and work tree, as tether names them to git, and where its
/// commands run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRepo {
    /// The git directory (a linked worktree's own, under the checkout's `.git/worktrees/`).
    pub git_dir: PathBuf,
    /// The top of the work tree.
    pub work_tree: PathBuf,
    /// The git directory every worktree of the repository shares (the checkout's `.git`; the
    /// same as [`GitRepo::git_dir`] for the checkout itself).
    pub common_dir: PathBuf,
    /// Where its commands run: in a sandbox of their own, or (the run's sandbox off) outside.
    pub confinement: Confinement,
}

/// What looking for a repository found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A repository with a work tree.
    Repo(GitRepo),
    /// None (or one git refused, such as one owned by another user that `safe.directory`
    /// does not allow): what git said.
    NotARepository(String),
}

impl Found {
    /// The repository, if one was found.
    pub fn repo(&self) -> Option<&GitRepo> {
        match self {
            Found::Repo(repo) => Some(repo),
            Found::NotARepository(_) => None,
        }
    }
}

/// Looks for the repository `dir` is in, as git would (its ownership checked against the
/// person's `safe.directory`), with the configuration neutralised, in a sandbox that reads only
/// `dir` and the `.git` above it (see [`crate::Writes`]'s module) unless `confinement` says
/// otherwise. The one discovery tether makes in a tree: when a run begins, or when a person
/// asks outside a run. The repository found runs its commands as `confinement` says.
pub async fn discover(
    dir: &Path,
    confinement: Confinement,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<Found, GitError> {
    let mut config = user::safe_directories(env_remove, cancel).await;
    config.extend(fixed());
    let mut cmd = GitCommand::new(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
            "--show-toplevel",
        ],
    )
    .without_env(env_remove);
    let sandbox = confinement.sandbox(&crate::person::discovery(dir))?;
    if sandbox.is_some() {
        for (name, value) in crate::person::discovery_edge(dir) {
            cmd = cmd.env(&name, value);
        }
    }
    let setting = Setting {
        config: &config,
        sandbox: sandbox.as_ref(),
        ..Setting::default()
    };
    let out = exec(&cmd, &setting, cancel).await?;
    if !out.ok() {
        return Ok(Found::NotARepository(out.first_line().to_owned()));
    }
    let mut lines = out.stdout.lines();
    match (lines.next(), lines.next(), lines.next()) {
        (Some(git_dir), Some(common), Some(top))
            if !git_dir.is_empty() && !common.is_empty() && !top.is_empty() =>
        {
            Ok(Found::Repo(GitRepo {
                git_dir: PathBuf::from(git_dir),
                work_tree: PathBuf::from(top),
                common_dir: PathBuf::from(common),
                confinement,
            }))
        }
        _ => Ok(Found::NotARepository(format!(
            "git named no work tree: {}",
            out.stdout.trim()
        ))),
    }
}

impl GitRepo {
    /// Runs `cmd` in this repository: `GIT_DIR` and `GIT_WORK_TREE` pinned, the configuration
    /// neutralised, and every filter, diff and merge driver the configuration defines left
    /// without a program; in a sandbox granting what `cmd` writes ([`GitCommand::writes`]),
    /// unless the repository runs its commands unconfined. A command that exits non-zero is an
    /// [`Ok`] with its code. Fails closed: when the drivers cannot all be listed (a listing past
    /// [`drivers::LISTING_BYTES`], a name that cannot be given back to git) or the sandbox cannot
    /// be built, the command does not run ([`GitError::Cut`], [`GitError::Unneutral`],
    /// [`GitError::NoSandbox`], [`GitError::Refused`]).
    pub async fn run(
        &self,
        cmd: &GitCommand,
        cancel: &CancellationToken,
    ) -> Result<GitOutput, GitError> {
        let pinned = Some((self.git_dir.as_path(), self.work_tree.as_path()));
        let mut config = fixed();
        let list = GitCommand::new(&cmd.cwd, drivers::LIST_ARGS)
            .without_env(&cmd.env_remove)
            .whole(drivers::LISTING_BYTES);
        let reading = self.sandbox_for(&list)?;
        let listing = exec(
            &list,
            &Setting {
                pinned,
                config: &config,
                sandbox: reading.as_ref(),
                ..Setting::default()
            },
            cancel,
        )
        .await?;
        match listing.code {
            0 => {
                let bytes = listing.bytes.as_deref().unwrap_or_default();
                let Some(overrides) = drivers::overrides(bytes) else {
                    return Err(GitError::Unneutral {
                        what: cmd.describe(),
                    });
                };
                config.extend(overrides);
            }
            // No key matched.
            1 => {}
            // The configuration cannot be read: the command would not run either.
            _ => return Ok(listing),
        }
        let sandbox = self.sandbox_for(cmd)?;
        let setting = Setting {
            pinned,
            config: &config,
            sandbox: sandbox.as_ref(),
            ..Setting::default()
        };
        exec(cmd, &setting, cancel).await
    }

    /// The sandbox `cmd` runs in: `None` when the repository's commands run unconfined.
    pub(crate) fn sandbox_for(
        &self,
        cmd: &GitCommand,
    ) -> Result<Option<std::sync::Arc<tether_sandbox::Sandbox>>, GitError> {
        match self.confinement {
            Confinement::Unconfined => Ok(None),
            Confinement::Sandboxed => self.confinement.sandbox(&self.reach(cmd)?),
        }
    }

    /// [`GitRepo::run`], with the output when git exited 0 and an error naming the command and
    /// what git said otherwise.
    pub async fn ok(
        &self,
        cmd: &GitCommand,
        cancel: &CancellationToken,
    ) -> Result<String, GitError> {
        let out = self.run(cmd, cancel).await?;
        if out.ok() {
            Ok(out.stdout)
        } else {
            Err(GitError::Failed {
                what: cmd.describe(),
                stderr: out.stderr.trim().to_owned(),
            })
        }
    }
}

/// [`neutral::FIXED`] as owned pairs.
pub(crate) fn fixed() -> Vec<(String, String)> {
    neutral::FIXED
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}
