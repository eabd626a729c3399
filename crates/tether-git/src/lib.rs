//! The one way tether runs git on a tree the agent works in.
//!
//! tether's own git (a run's starting snapshot, the judge's diff and changed lines, the run's
//! report, the worktree and the commit per signed-off goal) works on a tree the agent wrote.
//! git obeys configuration, and configuration can name programs (`core.fsmonitor`, hooks,
//! filters, …): a repository the agent made with `git init`, a submodule whose `.git` file it
//! pointed at a repository of its own, or a linked worktree's `.git` file it replaced would make
//! tether run the agent's program, as the person. So:
//!
//! - **Snapshots and diffs run in tether's own repository** ([`Snapshots`]): a git directory of
//!   tether's under the workspace's state directory, with a configuration tether wrote and a
//!   private index; git reads no configuration the agent could have written, and no
//!   `.gitattributes`. The workspace's snapshot when a run begins ([`Start`], recorded in the
//!   run's spec) is what "changed by this run" is measured from, in every kind of workspace: a
//!   repository with or without commits, a dirty tree, a directory that is no repository.
//!   Snapshots are bounded ([`snapshot`]: the listing read whole up to a cap, files over
//!   16 MiB and what is not a file left out and reported).
//! - **That git runs in a sandbox of its own** ([`Confinement`]): the work tree readable only,
//!   tether's directory writable, no network. A kernel that cannot enforce it means git does
//!   not run, unless the person turned the run's sandbox off.
//! - **Each run's start is kept whole** ([`Snapshots::pin`]): pinned under
//!   `refs/tether/runs/<run>` with what it borrowed from the person's repository copied in, and
//!   the repository tidied now and then ([`Snapshots::tidy`]), dropping the pins its caller
//!   names and what only they reached.
//! - **What must act on the person's repository** (a `--worktree` run's worktree and branch)
//!   names that repository to git ([`GitRepo::run`]: `GIT_DIR`, `GIT_WORK_TREE`, found once,
//!   [`discover`]) with its configuration neutralised ([`neutral`]: no system or global file,
//!   no `GIT_*` variable of tether's, every key that runs a program turned off, every filter,
//!   diff and merge driver left without a program, [`drivers`]) — failing closed when the
//!   drivers cannot all be listed — and in a sandbox of its own that writes only what the
//!   command writes ([`Writes`]: never the repository's `hooks/` or `config`), or not at all.
//!   git's ownership check stands there: the person's `safe.directory` entries are carried
//!   over ([`user`]) to the discovery, which reads only the `.git` above the directory it
//!   starts in. Reading the person's own global settings ([`user`]) runs outside any sandbox:
//!   from `/`, outside any repository, it reads their global and system files and runs no
//!   program. So does the one git that needs the network and the person's credentials: the
//!   exchanges of a run of many goals with the repository's shared remote ([`remote`]: clone,
//!   fetch, push, list; hooks and `core.fsmonitor` off, no prompt, bounded).

mod bounded;
mod command;
mod confine;
pub mod drivers;
mod excludes;
mod keep;
pub mod neutral;
mod person;
mod private;
mod record;
pub mod remote;
#[cfg(test)]
mod remote_tests;
mod repo;
pub mod snapshot;
pub mod user;

use std::path::PathBuf;

pub use command::{DEFAULT_TIMEOUT, GitCommand, GitOutput};
pub use confine::Confinement;
pub use keep::{RUNS_REFS, Tidied};
pub use person::Writes;
pub use private::Snapshots;
pub use record::{ObjectId, SPEC_KEY, Start, StartTree};
pub use repo::{Found, GitRepo, discover};
pub use snapshot::{Skip, Skipped, Snapshot};

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
    /// git exited non-zero (from [`GitRepo::ok`], [`Snapshots::ok`]).
    #[error("`git {what}` failed: {stderr}")]
    Failed {
        /// The command's arguments.
        what: String,
        /// The end of git's error output.
        stderr: String,
    },
    /// Output that must be read whole was longer than its cap: the command's answer is not
    /// taken in part.
    #[error("`git {what}` printed more than {cap} bytes: refused rather than read in part")]
    Cut {
        /// The command's arguments.
        what: String,
        /// The cap.
        cap: usize,
    },
    /// A driver of the repository's configuration could not be neutralised: the command was
    /// not run.
    #[error(
        "`git {what}` was not run: the repository's configuration names a driver tether cannot \
         turn off"
    )]
    Unneutral {
        /// The command's arguments.
        what: String,
    },
    /// tether's git needs a sandbox the kernel cannot enforce (and the run's sandbox is on).
    #[error("tether's git runs only in a sandbox, which cannot be built here: {why}")]
    NoSandbox {
        /// Why.
        why: String,
    },
    /// A command on a person's repository was not run: what its sandbox must grant could not be
    /// prepared (a directory git writes could not be made, more worktrees than it can keep in
    /// sight).
    #[error("git was not run: {why}")]
    Refused {
        /// Why.
        why: String,
    },
    /// tether's snapshot repository could not be made or written.
    #[error("tether's snapshot repository ({path}): {source}")]
    Private {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A path git must be given is not UTF-8.
    #[error("the path {0} is not UTF-8")]
    NotUtf8(PathBuf),
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod keep_tests;
#[cfg(test)]
mod sandbox_tests;
#[cfg(test)]
mod snapshot_tests;
