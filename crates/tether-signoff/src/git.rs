//! The one way sign-off runs git: every git command of this crate goes through [`git`], so how
//! tether runs git on the agent's tree (its arguments, environment and bounds) is decided in
//! one place.
//!
//! git runs directly (no shell) with fixed arguments, in the workspace, with stdin from
//! `/dev/null`, in its own process group, bounded in time ([`GIT_TIMEOUT`]) and in the output
//! kept (the caller's cap: the tail is kept), with tether's own keys removed from its
//! environment. It runs outside the sandbox: it is tether's own git, reading a `.git` the
//! sandbox kept read-only.

use std::path::Path;
use std::time::Duration;

use tether_tools::{ProgramCommand, ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

/// Each git command gets this long.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of git's stderr is kept (its first line names the problem).
const STDERR_BYTES: usize = 2000;

/// What a git command that ran to its end printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitRun {
    /// Its exit code.
    pub code: i32,
    /// The tail of its stdout (at most the cap asked for), prefixed `[… N bytes cut …]` if cut.
    pub stdout: String,
    /// The tail of its stderr.
    pub stderr: String,
}

impl GitRun {
    /// Whether git exited 0.
    pub fn ok(&self) -> bool {
        self.code == 0
    }

    /// The first line git printed on stderr (or stdout), for a message.
    pub fn first_line(&self) -> &str {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        text.lines().next().unwrap_or("").trim()
    }
}

/// Runs `git <args>` in `root`, keeping at most `stdout_cap` bytes of its stdout; `None` if it
/// could not start, timed out or was cancelled (logged at debug level).
pub(crate) async fn git(
    root: &Path,
    args: &[&str],
    stdout_cap: usize,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Option<GitRun> {
    let mut argv = vec!["git".to_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let spec = ProgramCommand {
        argv,
        cwd: root.to_owned(),
        input: None,
        timeout: GIT_TIMEOUT,
        kill_grace: Duration::from_secs(1),
        stdout_cap,
        stderr_cap: STDERR_BYTES,
        env_remove: env_remove.to_vec(),
        env: Vec::new(),
        sandbox: None,
    };
    match run_program(&spec, cancel).await {
        Ok(run) => match run.end {
            ShellEnd::Exited(code) => Some(GitRun {
                code,
                stdout: run.stdout,
                stderr: run.stderr,
            }),
            end => {
                tracing::debug!(?args, ?end, "git did not finish");
                None
            }
        },
        Err(e) => {
            tracing::debug!(?args, error = %e, "git could not run");
            None
        }
    }
}
