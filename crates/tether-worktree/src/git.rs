//! Running git for the worktree: through tether's spawner, bounded, without a terminal prompt.

use std::path::Path;
use std::time::Duration;

use tether_tools::{ProgramCommand, ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

use crate::WorktreeError;

/// The longest one git command may take (a checkout of a large tree).
const TIMEOUT: Duration = Duration::from_secs(300);

/// What git printed, if it exited with 0.
pub(crate) async fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    git_with(dir, args, None).await
}

/// [`git`] with `input` on stdin.
pub(crate) async fn git_with(
    dir: &Path,
    args: &[&str],
    input: Option<&str>,
) -> Result<String, WorktreeError> {
    let (code, out, err) = run(dir, args, input).await?;
    if code == 0 {
        Ok(out)
    } else {
        Err(WorktreeError::Git {
            what: args.join(" "),
            stderr: err.trim().to_owned(),
        })
    }
}

/// Whether git exited with 0 (for questions such as "is there a branch").
pub(crate) async fn git_ok(dir: &Path, args: &[&str]) -> Result<bool, WorktreeError> {
    Ok(run(dir, args, None).await?.0 == 0)
}

async fn run(
    dir: &Path,
    args: &[&str],
    input: Option<&str>,
) -> Result<(i32, String, String), WorktreeError> {
    let mut argv = vec!["git".to_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let spec = ProgramCommand {
        argv,
        cwd: dir.to_path_buf(),
        input: input.map(|i| i.as_bytes().to_vec()),
        timeout: TIMEOUT,
        kill_grace: Duration::from_secs(2),
        stdout_cap: 1 << 20,
        stderr_cap: 16 * 1024,
        env_remove: Vec::new(),
        env: vec![("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned())],
        sandbox: None,
    };
    let run = run_program(&spec, &CancellationToken::new())
        .await
        .map_err(WorktreeError::Spawn)?;
    match run.end {
        ShellEnd::Exited(code) => Ok((code, run.stdout, run.stderr)),
        other => Err(WorktreeError::Git {
            what: args.join(" "),
            stderr: format!("did not finish: {other:?}"),
        }),
    }
}
