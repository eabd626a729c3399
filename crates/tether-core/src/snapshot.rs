//! What a run changed: the workspace's files as a git tree when the run starts, and the
//! `git diff --stat` between that tree and the files as they are when the report is written.
//!
//! A tree is made from a throwaway index (`GIT_INDEX_FILE` under the run's directory, removed
//! after), so the person's own index and branches are never touched and new, untracked files
//! count too (ignored ones and `.tether/` do not). Every git command is bounded in time and
//! output and runs through `tether-git` in the repository the run recorded when it began; a
//! workspace that was not a git repository then simply has no diffstat.

use std::path::PathBuf;
use std::time::Duration;

use tether_config::Workspace;
use tether_git::{AtStart, GitCommand, GitRepo};
use tether_store::RunId;
use tokio_util::sync::CancellationToken;

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of `git diff --stat` is kept.
const STAT_BYTES: usize = 8000;

/// `.tether/runs/<run>/start.tree`: the tree the run started from.
pub fn start_file(ws: &Workspace, run: &RunId) -> PathBuf {
    ws.runs_dir().join(run.as_str()).join("start.tree")
}

/// Records the tree `run` starts from, when it began in a git repository (`at`, as the run
/// recorded it). Never fails the run: a problem is logged.
pub async fn record_start(ws: &Workspace, run: &RunId, at: &AtStart, env_remove: &[String]) {
    let Some(repo) = at.repo() else {
        return;
    };
    let path = start_file(ws, run);
    let Some(tree) = tree(ws, run, repo, env_remove).await else {
        return;
    };
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, format!("{tree}\n")));
    if let Err(e) = written {
        tracing::debug!(error = %e, "could not record the run's starting tree");
    }
}

/// `git diff --stat` from the tree `run` started from to the files now; `None` when there is
/// no starting tree (not a git repository, a run recorded before tether kept one).
pub async fn diffstat(
    ws: &Workspace,
    run: &RunId,
    at: &AtStart,
    env_remove: &[String],
) -> Option<String> {
    let repo = at.repo()?;
    let start = std::fs::read_to_string(start_file(ws, run)).ok()?;
    let start = start.trim();
    if start.is_empty() || !start.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let now = tree(ws, run, repo, env_remove).await?;
    if now == start {
        return Some("no file changed".to_owned());
    }
    let args = [
        "diff",
        "--stat=100",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        start,
        &now,
    ];
    let out = git(ws, repo, &args, None, env_remove).await?;
    out.ok().then(|| out.stdout.trim_end().to_owned())
}

/// The workspace's files now, as a git tree id: added to a throwaway index, written as a tree.
async fn tree(
    ws: &Workspace,
    run: &RunId,
    repo: &GitRepo,
    env_remove: &[String],
) -> Option<String> {
    let index = ws.runs_dir().join(run.as_str()).join("snapshot.index");
    std::fs::create_dir_all(index.parent()?).ok()?;
    let _ = std::fs::remove_file(&index);
    let add = ["add", "-A", "--", ".", ":(exclude).tether"];
    let added = git(ws, repo, &add, Some(&index), env_remove).await;
    let written = match added {
        Some(out) if out.ok() => git(ws, repo, &["write-tree"], Some(&index), env_remove).await,
        _ => None,
    };
    let _ = std::fs::remove_file(&index);
    let out = written?;
    let id = out.stdout.trim();
    (out.ok() && !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit())).then(|| id.to_owned())
}

/// Runs a fixed git command in the run's repository (with the throwaway `index`, when given);
/// `None` if it could not run or did not finish.
async fn git(
    ws: &Workspace,
    repo: &GitRepo,
    args: &[&str],
    index: Option<&std::path::Path>,
    env_remove: &[String],
) -> Option<tether_git::GitOutput> {
    let mut cmd = GitCommand::new(ws.root(), args)
        .timeout(GIT_TIMEOUT)
        .stdout_cap(STAT_BYTES)
        .without_env(env_remove);
    if let Some(index) = index {
        cmd = cmd.env("GIT_INDEX_FILE", index.to_str()?);
    }
    match repo.run(&cmd, &CancellationToken::new()).await {
        Ok(out) => Some(out),
        Err(e) => {
            tracing::debug!(?args, error = %e, "git gave no answer");
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
        let run: RunId = "r-abcdef".parse().unwrap();
        let none = AtStart::NotARepository;
        assert_eq!(diffstat(&ws, &run, &none, &[]).await, None, "no start yet");
        record_start(&ws, &run, &none, &[]).await;
        assert!(!start_file(&ws, &run).exists(), "not a git repository");

        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(dir.path(), &["add", "a.txt"]);
        git(dir.path(), &["commit", "-qm", "a"]);
        let cancel = CancellationToken::new();
        let at = match tether_git::discover(dir.path(), &[], &cancel)
            .await
            .unwrap()
        {
            tether_git::Found::Repo(repo) => AtStart::Repo(repo),
            other => panic!("{other:?}"),
        };
        record_start(&ws, &run, &at, &[]).await;
        assert_eq!(
            diffstat(&ws, &run, &at, &[]).await.as_deref(),
            Some("no file changed")
        );
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "new\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".tether")).unwrap();
        std::fs::write(dir.path().join(".tether/ignored"), "x\n").unwrap();
        let stat = diffstat(&ws, &run, &at, &[]).await.unwrap();
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
}
