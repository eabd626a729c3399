//! What a run changed: the workspace's files as a git tree when the run starts, and the
//! `git diff --stat` between that tree and the files as they are when the report is written.
//!
//! A tree is made from a throwaway index (`GIT_INDEX_FILE` under the run's directory, removed
//! after), so the person's own index and branches are never touched and new, untracked files
//! count too (ignored ones and `.tether/` do not). Every git command is bounded in time and
//! output; a workspace that is not a git repository simply has no diffstat.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_config::Workspace;
use tether_store::RunId;
use tether_tools::{ShellCommand, run_exit_code};
use tokio_util::sync::CancellationToken;

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of `git diff --stat` is kept.
const STAT_BYTES: usize = 8000;

/// `.tether/runs/<run>/start.tree`: the tree the run started from.
pub fn start_file(ws: &Workspace, run: &RunId) -> PathBuf {
    ws.runs_dir().join(run.as_str()).join("start.tree")
}

/// Records the tree `run` starts from, when the workspace is a git repository. Never fails
/// the run: a problem is logged.
pub async fn record_start(ws: &Workspace, run: &RunId, env_remove: &[String]) {
    let path = start_file(ws, run);
    let Some(tree) = tree(ws, run, env_remove).await else {
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
pub async fn diffstat(ws: &Workspace, run: &RunId, env_remove: &[String]) -> Option<String> {
    let start = std::fs::read_to_string(start_file(ws, run)).ok()?;
    let start = start.trim();
    if start.is_empty() || !start.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let now = tree(ws, run, env_remove).await?;
    if now == start {
        return Some("no file changed".to_owned());
    }
    let (code, out) = git(
        ws.root(),
        &format!("git diff --stat=100 {start} {now}"),
        env_remove,
    )
    .await?;
    (code == 0).then(|| out.trim_end().to_owned())
}

/// The workspace's files now, as a git tree id.
async fn tree(ws: &Workspace, run: &RunId, env_remove: &[String]) -> Option<String> {
    let index = ws.runs_dir().join(run.as_str()).join("snapshot.index");
    std::fs::create_dir_all(index.parent()?).ok()?;
    let index = shell_quote(&index);
    let command = format!(
        "git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 3; \
         rm -f {index}; \
         GIT_INDEX_FILE={index} git add -A -- . ':(exclude).tether' >/dev/null 2>&1 && \
         GIT_INDEX_FILE={index} git write-tree; rc=$?; rm -f {index}; exit $rc"
    );
    let (code, out) = git(ws.root(), &command, env_remove).await?;
    let id = out.trim();
    (code == 0 && !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| id.to_owned())
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// Runs a fixed git command line; `None` if it could not run or did not finish.
async fn git(root: &Path, command: &str, env_remove: &[String]) -> Option<(i32, String)> {
    let spec = ShellCommand {
        command: command.to_owned(),
        cwd: root.to_owned(),
        timeout: GIT_TIMEOUT,
        kill_grace: Duration::from_secs(1),
        output_cap: STAT_BYTES,
        env_remove: env_remove.to_vec(),
        // tether's own git.
        sandbox: None,
    };
    run_exit_code(&spec, &CancellationToken::new()).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

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
        assert_eq!(diffstat(&ws, &run, &[]).await, None, "no start yet");
        record_start(&ws, &run, &[]).await;
        assert!(!start_file(&ws, &run).exists(), "not a git repository");

        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(dir.path(), &["add", "a.txt"]);
        git(dir.path(), &["commit", "-qm", "a"]);
        record_start(&ws, &run, &[]).await;
        assert_eq!(
            diffstat(&ws, &run, &[]).await.as_deref(),
            Some("no file changed")
        );
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "new\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".tether")).unwrap();
        std::fs::write(dir.path().join(".tether/ignored"), "x\n").unwrap();
        let stat = diffstat(&ws, &run, &[]).await.unwrap();
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
