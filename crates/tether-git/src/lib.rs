//! The one way tether runs git on a tree the agent works in.
//!
//! tether's own git (the judge's diff, a run's starting snapshot and report, the worktree and
//! the commit per signed-off goal) runs outside the sandbox, as the person, with every
//! capability they have, in a tree the agent wrote. git obeys configuration, and configuration
//! can name programs (`core.fsmonitor`, hooks, filters, …): a repository the agent made with
//! `git init`, a submodule whose `.git` file it pointed at a repository of its own, or a linked
//! worktree's `.git` file it replaced would make tether run the agent's program. So:
//!
//! - git finds a repository only once, when a run begins ([`discover`]), and the run records it
//!   ([`AtStart`], in its spec in the store); every later command names that repository to git
//!   ([`GitRepo::run`]: `GIT_DIR`, `GIT_WORK_TREE`), never looks for one in the tree. A
//!   workspace that was not a repository when its run began never gets git run in it.
//! - Every command runs with the configuration neutralised ([`neutral`]): no system or global
//!   file, no `GIT_*` variable of tether's environment, every key that runs a program turned
//!   off on the command line, and every filter, diff and merge driver the configuration defines
//!   left without a program ([`drivers`]).
//! - git's ownership check stands: the person's `safe.directory` entries are carried over
//!   ([`user`]) to the discovery, which refuses a repository they do not trust.

mod command;
pub mod drivers;
pub mod neutral;
mod record;
mod repo;
pub mod user;

use std::path::PathBuf;

pub use command::{DEFAULT_TIMEOUT, GitCommand, GitOutput};
pub use record::{AtStart, SPEC_KEY};
pub use repo::{Found, GitRepo, discover};

/// Why a git command gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("could not run `git {what}`: {source}")]
    Spawn {
        /// The command's arguments.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// git was stopped (its timeout, or a cancel) before it finished.
    #[error("`git {what}` did not finish ({end})")]
    Unfinished {
        /// The command's arguments.
        what: String,
        /// How it ended.
        end: String,
    },
    /// git exited non-zero (from [`GitRepo::ok`]).
    #[error("`git {what}` failed: {stderr}")]
    Failed {
        /// The command's arguments.
        what: String,
        /// The end of git's error output.
        stderr: String,
    },
    /// A path git must be given is not UTF-8.
    #[error("the path {0} is not UTF-8")]
    NotUtf8(PathBuf),
}

#[cfg(test)]
mod hostile_tests;
