//! A tether run's own git worktree.
//!
//! An agent working in the user's checkout is a risk to it: two runs on one repository collide,
//! and a wrong change lands beside the user's uncommitted work. A run started with `--worktree`
//! works instead in a worktree of its own, on a new branch `tether/<run-id>` made from `HEAD`,
//! in a directory outside the checkout. The worktree is locked (`git worktree lock`) while the
//! run lives, so `git worktree prune` and other runs leave it alone; [`Repo::reopen`] finds it
//! again on resume, or makes it again from the branch if someone removed the directory.
//! [`Worktree::commit`] records a signed-off goal on the branch, with a message built by
//! [`commit_message`]; git hooks run for it only when asked.
//!
//! A run of many goals at once gives each goal a worktree of its own on a branch cut from the
//! run's (`tether/<run-id>-<goal-id>`, [`Repo::create_goal`]) and merges a signed-off goal's
//! branch back ([`Worktree::merge`], see `merge.rs`).
//!
//! Every git command runs through `tether-git`. The commit's tree is built in tether's own
//! snapshot repository ([`Snapshotting`]): no configuration of the repository's, no
//! `.gitattributes`, in a sandbox where git writes only the repository's objects; the branch
//! is then moved to the commit made there. The commands on the repository itself (the
//! worktree, its lock, the branch, the hooks-mode commit) are bounded in time, with no prompt
//! for credentials, the configuration neutralised (refused when it cannot all be neutralised),
//! each in a sandbox of its own that writes only what it must (`tether_git::Writes`: the
//! records, the refs, the new worktree; never the repository's `hooks/` or `config`) unless the
//! run's sandbox is off, and run in a repository named to git, never found through the tree: the
//! checkout's, found when the run begins, and the worktree's own git directory, which tether
//! knows because it made the worktree (git's record of it in the checkout's `.git/worktrees/`),
//! never the worktree's `.git` file, which the agent can replace. Removing a worktree is
//! tether deleting the directory it made, then `git worktree prune`.

mod commit;
mod git;
mod merge;
mod repo;

pub use commit::{CommitInfo, Quote, commit_message};
pub use merge::{Merge, OnConflict, goal_branch_name};
pub use repo::{Repo, Snapshotting, Worktree, WorktreeInfo, branch_name};

use std::path::PathBuf;

/// What went wrong with a worktree, and what the caller can do about it.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// The directory is not in a git repository, or the repository has no commit to branch
    /// from: run without `--worktree`, or make a first commit.
    #[error(
        "{dir} is not a git repository with a commit to branch from ({detail}); commit first, or run without --worktree"
    )]
    NotARepo {
        /// The directory.
        dir: PathBuf,
        /// What git said.
        detail: String,
    },
    /// A git command failed.
    #[error("`git {what}` failed: {stderr}")]
    Git {
        /// The command's arguments.
        what: String,
        /// The end of git's error output.
        stderr: String,
    },
    /// A file or directory could not be made or locked.
    #[error("could not prepare the worktree: {0}")]
    Spawn(#[source] std::io::Error),
    /// git gave no answer (could not start, did not finish).
    #[error(transparent)]
    Run(#[from] tether_git::GitError),
    /// git's record of the worktree in the checkout's git directory is not there.
    #[error("the checkout's git directory has no record of the worktree {dir}")]
    NoRecord {
        /// The worktree.
        dir: PathBuf,
    },
    /// The run's branch is gone, so its worktree cannot be made again.
    #[error("the branch {branch} is gone: the run's work cannot be found again")]
    NoBranch {
        /// The branch.
        branch: String,
    },
    /// The worktree belongs to a live run: stop that run first.
    #[error(
        "the worktree of run {run} is in use by the live run; stop it first (`tether cancel {run}`)"
    )]
    Live {
        /// The run.
        run: String,
    },
}
