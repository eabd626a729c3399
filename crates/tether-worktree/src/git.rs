//! Running git for the worktree: through `tether-git` (a pinned repository, its configuration
//! neutralised, in a sandbox granting what each command writes), bounded, without a terminal
//! prompt.

use std::path::Path;
use std::time::Duration;

use tether_git::{GitCommand, GitRepo, Writes};
use tokio_util::sync::CancellationToken;

use crate::WorktreeError;

/// The longest one git command may take (a checkout of a large tree).
const TIMEOUT: Duration = Duration::from_secs(300);

/// `git <args>` in `cwd`, in `repo`.
pub(crate) fn command(cwd: &Path, args: &[&str]) -> GitCommand {
    GitCommand::new(cwd, args).timeout(TIMEOUT)
}

/// What git printed, if it exited with 0: a command that writes `writes` of the repository.
pub(crate) async fn git_writing(
    repo: &GitRepo,
    cwd: &Path,
    args: &[&str],
    writes: Writes,
) -> Result<String, WorktreeError> {
    git_with(repo, &command(cwd, args).writes(writes)).await
}

/// What git printed, if it exited with 0: a command that only reads.
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

/// Whether git exited with 0 (for questions such as "is there a branch", and a lock that may be
/// taken already).
pub(crate) async fn git_ok(repo: &GitRepo, cmd: &GitCommand) -> Result<bool, WorktreeError> {
    Ok(repo.run(cmd, &CancellationToken::new()).await?.ok())
}
