//! A case's workspace on disk, so that "the lines this run changed" are real: a git repository
//! whose one commit holds the files as they were before the run (and the plan), then the run's
//! change written over it — changed files rewritten, new files left untracked, deleted ones
//! removed. A case with `git: no` is a plain directory.
//!
//! git runs directly (no shell), bounded in time, with hooks and commit signing turned off and a
//! fixed author, so a user's git configuration cannot change the case. `__pycache__/` is excluded
//! through `.git/info/exclude` (the verify commands run Python; their caches are not the run's
//! work), and so is `.tether/` (the check's own store).

use std::path::Path;
use std::time::Duration;

use tether_tools::{ProgramCommand, ShellEnd, run_program};
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
    /// A git command failed.
    #[error("`git {command}` failed: {why}")]
    Git {
        /// The command's arguments.
        command: String,
        /// Why.
        why: String,
    },
}

/// Writes `case` into the empty directory `root`: its history when it is a git repository, then
/// the workspace as the run leaves it, and the plan.
pub(crate) async fn write(
    case: &Case,
    root: &Path,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<(), RepoError> {
    std::fs::write(root.join("plan.md"), case.plan())?;
    if case.git {
        write_all(root, &case.committed)?;
        let git = |args: &'static [&'static str]| git(root, args, env_remove, cancel);
        git(&["init", "-q"]).await?;
        std::fs::write(root.join(".git/info/exclude"), "__pycache__/\n.tether/\n")?;
        git(&["add", "-A"]).await?;
        git(&["commit", "-q", "--no-verify", "-m", "before the run"]).await?;
        for (path, _) in &case.committed {
            if !case.files.iter().any(|(p, _)| p == path) {
                std::fs::remove_file(root.join(path))?;
            }
        }
    }
    write_all(root, &case.files)?;
    Ok(())
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

/// Runs `git <args>` in `root` with a configuration of its own.
async fn git(
    root: &Path,
    args: &[&str],
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<(), RepoError> {
    let mut argv: Vec<String> = [
        "git",
        "-c",
        "user.name=tether judge test",
        "-c",
        "user.email=judge-test@localhost",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "init.defaultBranch=main",
    ]
    .map(str::to_owned)
    .to_vec();
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let spec = ProgramCommand {
        argv,
        cwd: root.to_owned(),
        input: None,
        timeout: GIT_TIMEOUT,
        kill_grace: Duration::from_secs(1),
        stdout_cap: 4000,
        stderr_cap: 4000,
        env_remove: env_remove.to_vec(),
        env: Vec::new(),
        sandbox: None,
    };
    let failed = |why: String| RepoError::Git {
        command: args.join(" "),
        why,
    };
    let run = run_program(&spec, cancel)
        .await
        .map_err(|e| failed(e.to_string()))?;
    match run.end {
        ShellEnd::Exited(0) => Ok(()),
        ShellEnd::Exited(code) => Err(failed(format!(
            "exit {code}: {}",
            run.stderr.lines().next().unwrap_or("").trim()
        ))),
        end => Err(failed(format!("it did not finish ({end:?})"))),
    }
}
