//! What a run changed: the workspace's files as a tree of tether's snapshot repository when the
//! run begins (recorded in the run's spec: [`tether_git::Start`]), and the `git diff --stat`
//! between that tree and the files as they are when the report is written.
//!
//! Every kind of workspace gets a snapshot — a repository with or without commits, a dirty
//! tree, a directory that is no repository — and none of them has git run in its own
//! repository: snapshots and diffs run in tether's own (`.tether/git/`, see
//! [`tether_git::Snapshots`]), in a sandbox of their own unless the person turned the run's
//! sandbox off, bounded in time and size. The person's index, branches and objects are never
//! written; ignored files and `.tether/` are left out, and so are files over 16 MiB and what is
//! not a file (reported in the log).
//!
//! A run's start is kept whole for as long as the run may measure from it ([`keep_start`]):
//! pinned in tether's repository with what it borrowed from the person's copied in, and the
//! repository tidied now and then.

mod keep;

use std::time::Duration;

use tether_config::Workspace;
use tether_git::{Confinement, Snapshots, Start, StartTree};
use tokio_util::sync::CancellationToken;

pub use keep::{KEEP_FOR, keep_start};

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of `git diff --stat` is kept.
const STAT_BYTES: usize = 8000;

/// The snapshot repository of `ws`, its git run as `git` says.
fn snapshots(
    ws: &Workspace,
    git: Confinement,
    env_remove: &[String],
) -> Result<Snapshots, tether_git::GitError> {
    Ok(Snapshots::open(&ws.state_dir(), ws.root(), git, env_remove)?.with_timeout(GIT_TIMEOUT))
}

/// The workspace as a run begins, for its spec: its snapshot, or why none could be taken
/// (logged; what the run changed is then not known). Never fails the run.
pub async fn take_start(ws: &Workspace, git: Confinement, env_remove: &[String]) -> Start {
    let taken = match snapshots(ws, git, env_remove) {
        Ok(snaps) => snaps.snapshot(&CancellationToken::new()).await,
        Err(e) => Err(e),
    };
    match taken {
        Ok(snapshot) => {
            if !snapshot.skipped.is_empty() {
                tracing::info!(
                    count = snapshot.skipped.len(),
                    first = %snapshot.skipped[0].path,
                    why = %snapshot.skipped[0].why,
                    "files left out of the run's starting snapshot: their lines never count as \
                     changed by the run"
                );
            }
            Start::Taken(StartTree::of(&snapshot))
        }
        Err(e) => {
            tracing::warn!(error = %e, "no snapshot of the workspace as the run begins: what the run changes will not be known");
            Start::Failed(e.to_string())
        }
    }
}

/// `git diff --stat` from the tree the run started from (`start`, as its spec recorded it) to
/// the files now; `None` when there is no starting tree (a run an older tether began, a
/// snapshot that failed) or git gave no answer.
pub async fn diffstat(
    ws: &Workspace,
    start: &Start,
    git: Confinement,
    env_remove: &[String],
) -> Option<String> {
    let start = start.tree()?;
    let snaps = snapshots(ws, git, env_remove)
        .inspect_err(|e| tracing::debug!(error = %e, "no diffstat"))
        .ok()?;
    let cancel = CancellationToken::new();
    let now = snaps
        .snapshot(&cancel)
        .await
        .inspect_err(|e| tracing::debug!(error = %e, "no diffstat"))
        .ok()?;
    if now.tree == start.tree {
        return Some("no file changed".to_owned());
    }
    let args = [
        "diff",
        "--stat=100",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        start.tree.as_str(),
        now.tree.as_str(),
    ];
    let cmd = snaps.command(&args).stdout_cap(STAT_BYTES);
    match snaps.ok(&cmd, &cancel).await {
        Ok(out) => Some(out.stdout.trim_end().to_owned()),
        Err(e) => {
            tracing::debug!(error = %e, "no diffstat");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use std::path::Path;
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[tokio::test]
    async fn the_diffstat_counts_changed_and_new_files_and_leaves_the_index_alone() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let git_mode = Confinement::Sandboxed;
        assert_eq!(diffstat(&ws, &Start::Unrecorded, git_mode, &[]).await, None);

        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(dir.path(), &["add", "a.txt"]);
        git(dir.path(), &["commit", "-qm", "a"]);
        let start = take_start(&ws, git_mode, &[]).await;
        assert!(start.tree().is_some(), "{start:?}");
        assert_eq!(
            diffstat(&ws, &start, git_mode, &[]).await.as_deref(),
            Some("no file changed")
        );
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "new\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".tether")).unwrap();
        std::fs::write(dir.path().join(".tether/ignored"), "x\n").unwrap();
        let stat = diffstat(&ws, &start, git_mode, &[]).await.unwrap();
        assert!(stat.contains("a.txt") && stat.contains("new.txt"), "{stat}");
        assert!(!stat.contains(".tether"), "{stat}");
        assert!(stat.contains("2 files changed, 2 insertions(+)"), "{stat}");
        let status = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let status = String::from_utf8_lossy(&status.stdout);
        assert!(
            status.contains(" M a.txt") && status.contains("?? new.txt"),
            "{status}"
        );
    }

    #[tokio::test]
    async fn a_directory_that_is_no_repository_gets_its_diffstat_too() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let start = take_start(&ws, Confinement::Sandboxed, &[]).await;
        std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
        let stat = diffstat(&ws, &start, Confinement::Sandboxed, &[])
            .await
            .unwrap();
        assert!(stat.contains("a.txt | 2 +-"), "{stat}");
        assert!(
            !dir.path().join(".git").exists(),
            "no repository made in the tree"
        );
    }
}
