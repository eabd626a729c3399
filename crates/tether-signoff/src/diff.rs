//! What the work changed, computed once per sign-off attempt: the summary the judge is given
//! (which files the work touched) and the lines it changed ([`ChangedLines`], which the quote
//! check reads), with the repository's tracked files (where the quote check looks for lines
//! common to many files).
//!
//! `git diff --stat HEAD` for tracked files and `git ls-files --others --exclude-standard` for
//! new ones, so the judge knows where to look without reading a whole diff; `git diff -U0 HEAD`
//! for the changed lines; `git ls-files` for the tracked files. Each is bounded (time and size)
//! and runs through `tether-git` in the repository the run recorded when it began ([`Repository`]),
//! never one found in the tree now: git obeys configuration, and the tree is the agent's. A
//! workspace that was not a git repository then says so; the judge then relies on the agent's
//! paths and its own `ls`/`grep`, and no line is known to be changed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_git::{AtStart, GitCommand, GitOutput, GitRepo};
use tokio_util::sync::CancellationToken;

use tether_config::STATE_DIR;

use crate::changed::{ChangedLines, Unknown, parse_names};

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// How many bytes of `git diff --stat` are kept (its end, where the totals are).
const STAT_BYTES: usize = 6000;
/// How many bytes of a file listing (untracked or tracked files) are kept.
const LIST_BYTES: usize = 1024 * 1024;
/// How many bytes of `git diff -U0` are kept (past it, the changed lines of the files cut off
/// are not known: a stricter check, never a laxer one).
const DIFF_BYTES: usize = 4 * 1024 * 1024;
/// How many untracked files are listed by name.
const MAX_UNTRACKED: usize = 50;

/// What the work changed in the workspace.
#[derive(Debug, Clone)]
pub(crate) struct WorkTree {
    /// The summary text, for the judge's prompt.
    pub summary: String,
    /// The lines this run changed.
    pub changed: ChangedLines,
    /// The repository's tracked files, relative to the workspace root; `None` outside a git
    /// repository (or when git failed).
    pub tracked: Option<Vec<PathBuf>>,
}

/// The repository git runs in for a sign-off, or why there is none.
#[derive(Debug, Clone)]
pub(crate) enum Repository {
    /// The repository the run recorded when it began (or, outside a run, the one found when
    /// the person asked).
    Pinned(GitRepo),
    /// None: the text the judge is given instead of a diff.
    None(&'static str),
}

impl Repository {
    /// What a run recorded.
    pub(crate) fn of_run(at: &AtStart) -> Repository {
        match (at.repo(), at.why_not()) {
            (Some(repo), _) => Repository::Pinned(repo.clone()),
            (None, why) => Repository::None(why.unwrap_or(NOT_A_REPOSITORY)),
        }
    }

    /// Outside a run: the repository `root` is in now, found with the configuration
    /// neutralised.
    pub(crate) async fn found_at(
        root: &Path,
        env_remove: &[String],
        cancel: &CancellationToken,
    ) -> Repository {
        match tether_git::discover(root, env_remove, cancel).await {
            Ok(tether_git::Found::Repo(repo)) => Repository::Pinned(repo),
            Ok(tether_git::Found::NotARepository(why)) => {
                tracing::debug!(%why, "no git repository for the sign-off");
                Repository::None(NOT_A_REPOSITORY)
            }
            Err(e) => {
                tracing::debug!(error = %e, "git could not look for a repository");
                Repository::None(NOT_A_REPOSITORY)
            }
        }
    }
}

/// What the judge is told outside a repository.
const NOT_A_REPOSITORY: &str = "not a git repository";

/// Asks git what changed in the workspace at `root`, in `repo`. Never fails: problems become
/// the text, and changed lines that cannot be known are [`Unknown`].
pub(crate) async fn collect(
    root: &Path,
    repo: &Repository,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> WorkTree {
    let repo = match repo {
        Repository::Pinned(repo) => repo,
        Repository::None(why) => {
            return WorkTree {
                summary: (*why).to_owned(),
                changed: ChangedLines::unknown(Unknown::NotRepository),
                tracked: None,
            };
        }
    };
    let run = |args: &'static [&'static str], cap: usize| async move {
        let cmd = GitCommand::new(root, args)
            .timeout(GIT_TIMEOUT)
            .stdout_cap(cap)
            .without_env(env_remove);
        match repo.run(&cmd, cancel).await {
            Ok(out) => Some(out),
            Err(e) => {
                tracing::debug!(?args, error = %e, "git gave no answer");
                None
            }
        }
    };
    let stat_run: Option<GitOutput> = run(
        &[
            "diff",
            "--stat",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=all",
            "HEAD",
            "--",
        ],
        STAT_BYTES,
    )
    .await;
    let has_head = stat_run.as_ref().is_some_and(|r| r.ok());
    let stat = match &stat_run {
        Some(out) if out.ok() && out.stdout.trim().is_empty() => {
            "no changes to tracked files since the last commit".to_owned()
        }
        Some(out) if out.ok() => format!("git diff --stat HEAD:\n{}", out.stdout.trim_end()),
        Some(out) => format!(
            "git diff --stat HEAD failed (no commit yet?): {}",
            out.first_line()
        ),
        None => "git diff --stat HEAD did not finish".to_owned(),
    };
    let untracked_run = run(&["ls-files", "--others", "--exclude-standard"], LIST_BYTES).await;
    let untracked = match &untracked_run {
        Some(out) if out.ok() => untracked_list(&out.stdout),
        _ => "untracked files: unknown (git ls-files failed)".to_owned(),
    };
    let tracked = run(&["ls-files"], LIST_BYTES)
        .await
        .filter(|r| r.ok())
        .map(|r| parse_names(&r.stdout));
    let changed = if has_head {
        let diff = run(
            &[
                "diff",
                "-U0",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--ignore-submodules=all",
                "--no-renames",
                "--relative",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "HEAD",
                "--",
            ],
            DIFF_BYTES,
        )
        .await;
        match (diff, &untracked_run) {
            (Some(diff), Some(untracked)) if diff.ok() && untracked.ok() => {
                ChangedLines::from_git(&diff.stdout, &untracked.stdout)
            }
            _ => ChangedLines::unknown(Unknown::GitFailed),
        }
    } else if stat_run.is_some() {
        ChangedLines::unknown(Unknown::NoCommit)
    } else {
        ChangedLines::unknown(Unknown::GitFailed)
    };
    WorkTree {
        summary: format!("{stat}\n{untracked}"),
        changed,
        tracked,
    }
}

fn untracked_list(out: &str) -> String {
    let state = format!("{STATE_DIR}/");
    let files: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(&state))
        .collect();
    if files.is_empty() {
        return "no untracked files".to_owned();
    }
    let mut text = format!("untracked files ({}):", files.len());
    for f in files.iter().take(MAX_UNTRACKED) {
        text.push_str("\n  ");
        text.push_str(f);
    }
    if files.len() > MAX_UNTRACKED {
        text.push_str(&format!("\n  … and {} more", files.len() - MAX_UNTRACKED));
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::process::Command;

    use tokio_util::sync::CancellationToken;

    use super::Repository;

    /// What changed at `root`, in the repository found there now (as outside a run).
    async fn collect(root: &std::path::Path, cancel: &CancellationToken) -> super::WorkTree {
        let repo = Repository::found_at(root, &[], cancel).await;
        super::collect(root, &repo, &[], cancel).await
    }

    fn git(dir: &std::path::Path, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {status:?}");
    }

    #[tokio::test]
    async fn a_repository_shows_changed_and_new_files_and_a_plain_directory_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let cancel = CancellationToken::new();
        assert_eq!(collect(root, &cancel).await.summary, "not a git repository");

        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        let fresh = collect(root, &cancel).await.summary;
        assert!(
            fresh.starts_with("git diff --stat HEAD failed (no commit yet?)"),
            "{fresh}"
        );

        git(root, &["add", "a.txt"]);
        git(root, &["commit", "-q", "-m", "first"]);
        assert_eq!(
            collect(root, &cancel).await.summary,
            "no changes to tracked files since the last commit\nno untracked files"
        );
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::create_dir(root.join(".tether")).unwrap();
        std::fs::write(root.join(".tether/tether.db"), "x").unwrap();
        std::fs::write(root.join("b.txt"), "new\n").unwrap();
        let text = collect(root, &cancel).await.summary;
        assert!(
            text.starts_with("git diff --stat HEAD:\n a.txt | 1 +\n"),
            "{text}"
        );
        assert!(text.ends_with("\nuntracked files (1):\n  b.txt"), "{text}");
    }
    #[tokio::test]
    async fn the_changed_lines_are_the_work_trees_against_head_relative_to_the_workspace() {
        use std::path::Path;

        use crate::changed::Unknown;

        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let cancel = CancellationToken::new();
        let root = top.join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        git(top, &["init", "-q"]);
        std::fs::write(root.join("src/calc.sh"), "#!/bin/sh\necho $(($1 - $2))\n").unwrap();
        std::fs::write(root.join(".nvmrc"), "18\n").unwrap();
        std::fs::write(top.join("outside.txt"), "one\n").unwrap();
        let fresh = collect(&root, &cancel).await;
        assert_eq!(fresh.changed.unknown_reason(), Some(Unknown::NoCommit));

        git(top, &["add", "-A"]);
        git(top, &["commit", "-q", "-m", "first"]);
        std::fs::write(root.join("src/calc.sh"), "#!/bin/sh\necho $(($1 + $2))\n").unwrap();
        std::fs::write(root.join(".nvmrc"), "22\n").unwrap();
        std::fs::write(root.join("NEW.md"), "a\nb\n").unwrap();
        std::fs::write(top.join("outside.txt"), "two\n").unwrap();
        std::fs::create_dir(root.join(".tether")).unwrap();
        std::fs::write(root.join(".tether/tether.db"), "x").unwrap();
        let work = collect(&root, &cancel).await;
        let changed = &work.changed;
        assert!(changed.contains(Path::new("src/calc.sh"), 2));
        assert!(!changed.contains(Path::new("src/calc.sh"), 1));
        assert!(changed.contains(Path::new(".nvmrc"), 1));
        assert!(changed.contains(Path::new("NEW.md"), 2));
        assert!(!changed.contains(Path::new(".tether/tether.db"), 1));
        // Outside the workspace, nothing is the workspace's change.
        assert_eq!(changed.files().count(), 3, "{changed:?}");
        let mut tracked = work.tracked.unwrap();
        tracked.sort();
        assert_eq!(
            tracked,
            [Path::new(".nvmrc"), Path::new("src/calc.sh")],
            "tracked files, relative to the workspace"
        );

        let plain = tempfile::tempdir().unwrap();
        let outside = collect(plain.path(), &cancel).await;
        assert_eq!(
            outside.changed.unknown_reason(),
            Some(Unknown::NotRepository)
        );
        assert!(outside.tracked.is_none());
    }

    #[test]
    fn untracked_files_are_bounded_and_tether_state_is_left_out() {
        let mut out = String::from(".tether/tether.db\n");
        for i in 0..60 {
            out.push_str(&format!("new/{i}.rs\n"));
        }
        let text = super::untracked_list(&out);
        assert!(
            text.starts_with("untracked files (60):\n  new/0.rs"),
            "{text}"
        );
        assert!(text.ends_with("\n  … and 10 more"), "{text}");
        assert!(!text.contains(".tether"), "{text}");
        assert_eq!(super::untracked_list(".tether/x\n"), "no untracked files");
    }
}
