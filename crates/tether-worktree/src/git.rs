//! Running git for the worktree: through `tether-git` (a pinned repository, its configuration
//! neutralised), bounded, without a terminal prompt.

use std::path::Path;
use std::time::Duration;

use tether_git::{GitCommand, GitRepo};
use tokio_util::sync::CancellationToken;

use crate::WorktreeError;

/// The longest one git command may take (a checkout of a large tree).
const TIMEOUT: Duration = Duration::from_secs(300);

/// `git <args>` in `cwd`, in `repo`.
pub(crate) fn command(cwd: &Path, args: &[&str]) -> GitCommand {
    GitCommand::new(cwd, args).timeout(TIMEOUT)
}

/// What git printed, if it exited with 0.
pub(crate) async fn git(
    repo: &GitRepo,
    cwd: &Path,
    args: &[&str],
) -> Result<String, WorktreeError> {
    git_with(repo, &command(cwd, args)).await
}

/// [`git`] for a command built with [`command`] (stdin, configuration).
pub(crate) async fn git_with(repo: &GitRepo, cmd: &GitCommand) -> Result<String, WorktreeError> {
    let out = repo.run(cmd, &CancellationToken::new()).await?;
    if out.ok() {
        Ok(out.stdout)
    } else {
        Err(WorktreeError::Git {
            what: cmd.describe(),
            stderr: out.stderr.trim().to_owned(),
        })
    }
}

/// Whether git exited with 0 (for questions such as "is there a branch").
pub(crate) async fn git_ok(
    repo: &GitRepo,
    cwd: &Path,
    args: &[&str],
) -> Result<bool, WorktreeError> {
    Ok(repo
        .run(&command(cwd, args), &CancellationToken::new())
        .await?
        .ok())
}
