//! The diff summary the judge is given: which files the work touched.
//!
//! `git diff --stat HEAD` for tracked files and `git ls-files --others --exclude-standard` for
//! new ones, both bounded (time and size), so the judge knows where to look without reading a
//! whole diff. A workspace that is not a git repository says so; the judge then relies on the
//! agent's paths and its own `ls`/`grep`.

use std::path::Path;
use std::time::Duration;

use tether_tools::{ShellCommand, run_exit_code};
use tokio_util::sync::CancellationToken;

use tether_config::STATE_DIR;

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How many bytes of `git diff --stat` are kept (its end, where the totals are).
const STAT_BYTES: usize = 6000;
/// How many untracked files are listed by name.
const MAX_UNTRACKED: usize = 50;

/// The summary text, for the judge's prompt. Never fails: problems become the text.
pub(crate) async fn summary(
    root: &Path,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> String {
    match git(
        root,
        "git rev-parse --is-inside-work-tree",
        env_remove,
        cancel,
    )
    .await
    {
        Some((0, out)) if out.trim() == "true" => {}
        _ => return "not a git repository".to_owned(),
    }
    let stat = match git(root, "git diff --stat HEAD --", env_remove, cancel).await {
        Some((0, out)) if out.trim().is_empty() => {
            "no changes to tracked files since the last commit".to_owned()
        }
        Some((0, out)) => format!("git diff --stat HEAD:\n{}", out.trim_end()),
        Some((_, out)) => format!(
            "git diff --stat HEAD failed (no commit yet?): {}",
            out.lines().next().unwrap_or("").trim()
        ),
        None => "git diff --stat HEAD did not finish".to_owned(),
    };
    let untracked = match git(
        root,
        "git ls-files --others --exclude-standard",
        env_remove,
        cancel,
    )
    .await
    {
        Some((0, out)) => untracked_list(&out),
        _ => "untracked files: unknown (git ls-files failed)".to_owned(),
    };
    format!("{stat}\n{untracked}")
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

/// Runs a fixed git command; `None` if it could not run, timed out or was cancelled.
async fn git(
    root: &Path,
    command: &str,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Option<(i32, String)> {
    let spec = ShellCommand {
        command: format!("{command} 2>&1"),
        cwd: root.to_owned(),
        timeout: GIT_TIMEOUT,
        kill_grace: Duration::from_secs(1),
        output_cap: STAT_BYTES,
        env_remove: env_remove.to_vec(),
        // tether's own git, reading a `.git` the sandbox kept read-only.
        sandbox: None,
    };
    run_exit_code(&spec, cancel).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::process::Command;

    use tokio_util::sync::CancellationToken;

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
        assert_eq!(
            super::summary(root, &[], &cancel).await,
            "not a git repository"
        );

        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        let fresh = super::summary(root, &[], &cancel).await;
        assert!(
            fresh.starts_with("git diff --stat HEAD failed (no commit yet?)"),
            "{fresh}"
        );

        git(root, &["add", "a.txt"]);
        git(root, &["commit", "-q", "-m", "first"]);
        assert_eq!(
            super::summary(root, &[], &cancel).await,
            "no changes to tracked files since the last commit\nno untracked files"
        );
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::create_dir(root.join(".tether")).unwrap();
        std::fs::write(root.join(".tether/tether.db"), "x").unwrap();
        std::fs::write(root.join("b.txt"), "new\n").unwrap();
        let text = super::summary(root, &[], &cancel).await;
        assert!(
            text.starts_with("git diff --stat HEAD:\n a.txt | 1 +\n"),
            "{text}"
        );
        assert!(text.ends_with("\nuntracked files (1):\n  b.txt"), "{text}");
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
