//! A case's workspace on disk, so that "the lines this run changed" are real: a git repository
//! whose one commit holds the files as they were before the run (and the plan), snapshotted as
//! a run snapshots its workspace when it begins (in tether's own snapshot repository), then the
//! run's change written over it — changed files rewritten, new files left untracked, deleted
//! ones removed. A case with `git: no` is a plain directory with no starting snapshot (no line
//! is then known to be changed).
//!
//! git runs through `tether-git` (no shell, bounded in time, the configuration neutralised: no
//! hooks, no signing, no filters, none of the person's configuration files) with a fixed
//! author, so no git configuration can change the case. `__pycache__/` is excluded
//! through `.git/info/exclude` (the verify commands run Python; their caches are not the run's
//! work), and so is `.tether/` (the check's own store). The snapshot runs outside a sandbox: the
//! case's files are tether's or the person's, no agent's.

use std::path::Path;
use std::time::Duration;

use tether_git::{Confinement, GitCommand, GitRepo, Snapshots, Start, StartTree};
use tokio_util::sync::CancellationToken;

use crate::case::Case;

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a case's workspace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// A file could not be written.
    #[error("could not write its files: {0}")]
    Files(#[from] std::io::Error),
    /// The snapshot of the case before the run could not be taken.
    #[error("could not snapshot it before the run: {0}")]
    Snapshot(#[from] tether_git::GitError),
    /// A git command failed.
    #[error("`git {command}` failed: {why}")]
    Git {
        /// The command's arguments.
        command: String,
        /// Why.
        why: String,
    },
}

/// Writes `case` into the empty directory `root` (whose state directory is `state_dir`): its
/// history when it is a git repository, snapshotted as a run's start, then the workspace as the
/// run leaves it, and the plan. The start the sign-off compares with.
pub(crate) async fn write(
    case: &Case,
    (root, state_dir): (&Path, &Path),
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<Start, RepoError> {
    std::fs::write(root.join("plan.md"), case.plan())?;
    let mut start = Start::Unrecorded;
    if case.git {
        write_all(root, &case.committed)?;
        let git = |args: &'static [&'static str]| git(root, args, env_remove, cancel);
        git(&["init", "-q"]).await?;
        std::fs::write(root.join(".git/info/exclude"), "__pycache__/\n.tether/\n")?;
        git(&["add", "-A"]).await?;
        git(&["commit", "-q", "--no-verify", "-m", "before the run"]).await?;
        let snaps = Snapshots::open(state_dir, root, Confinement::Unconfined, env_remove)?
            .with_timeout(GIT_TIMEOUT);
        start = Start::Taken(StartTree::of(&snaps.snapshot(cancel).await?));
        for (path, _) in &case.committed {
            if !case.files.iter().any(|(p, _)| p == path) {
                std::fs::remove_file(root.join(path))?;
            }
        }
    }
    write_all(root, &case.files)?;
    Ok(start)
}

fn write_all(root: &Path, files: &[(String, String)]) -> std::io::Result<()> {
    for (path, contents) in files {
        let target = root.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, contents)?;
    }
    Ok(())
}

/// Runs `git <args>` in the repository at `root` (named to git, never looked for: the case's
/// files could hold a `.git` of their own) through `tether-git`, with a configuration of its own.
async fn git(
    root: &Path,
    args: &[&str],
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<(), RepoError> {
    // A repository of the bench's own, made from the case's files (no agent's): unconfined, as
    // its snapshots are.
    let repo = GitRepo {
        git_dir: root.join(".git"),
        work_tree: root.to_owned(),
        common_dir: root.join(".git"),
        confinement: Confinement::Unconfined,
    };
    let cmd = GitCommand::new(root, args)
        .timeout(GIT_TIMEOUT)
        .stdout_cap(4000)
        .config("user.name", "tether judge test")
        .config("user.email", "judge-test@localhost")
        .config("init.defaultBranch", "main")
        .without_env(env_remove);
    let failed = |why: String| RepoError::Git {
        command: args.join(" "),
        why,
    };
    let out = repo
        .run(&cmd, cancel)
        .await
        .map_err(|e| failed(e.to_string()))?;
    if out.ok() {
        Ok(())
    } else {
        Err(failed(format!("exit {}: {}", out.code, out.first_line())))
    }
}
