//! One git command, and how it runs: directly (no shell), through tether's spawner (its own
//! process group, null or given stdin, bounded in time and output, never in the sandbox: it is
//! tether's own act), with the environment and configuration of [`crate::neutral`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_tools::{ProgramCommand, ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

use crate::GitError;
use crate::neutral;

/// How long a git command gets unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of git's stderr is kept (its first line names the problem).
const STDERR_BYTES: usize = 16 * 1024;

/// A git command to run: its arguments, where, and what it is given.
#[derive(Debug, Clone)]
pub struct GitCommand {
    pub(crate) args: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) input: Option<Vec<u8>>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) config: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    pub(crate) stdout_cap: usize,
    pub(crate) env_remove: Vec<String>,
    pub(crate) hooks: Option<PathBuf>,
}

impl GitCommand {
    /// `git <args>` in `cwd` (inside the work tree: relative paths and `--relative` are
    /// relative to it), with stdin from `/dev/null`, [`DEFAULT_TIMEOUT`] and 1 MiB of stdout.
    pub fn new(cwd: impl Into<PathBuf>, args: &[&str]) -> Self {
        GitCommand {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            cwd: cwd.into(),
            input: None,
            env: Vec::new(),
            config: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            stdout_cap: 1 << 20,
            env_remove: Vec::new(),
            hooks: None,
        }
    }

    /// Runs the hooks in `dir` (the repository's own `hooks/` in its git directory, when the
    /// person asked for them), instead of none. Never give a directory of the work tree: the
    /// agent writes it.
    #[must_use]
    pub fn hooks_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.hooks = Some(dir.into());
        self
    }

    /// `bytes` on stdin.
    #[must_use]
    pub fn input(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.input = Some(bytes.into());
        self
    }

    /// The variable `name` set to `value` (such as `GIT_INDEX_FILE`).
    #[must_use]
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Self {
        self.env.push((name.to_owned(), value.into()));
        self
    }

    /// The configuration `key=value` on the command line (such as `user.name`). It cannot undo
    /// what [`crate::neutral`] turns off: those come after, and the last wins.
    #[must_use]
    pub fn config(mut self, key: &str, value: impl Into<String>) -> Self {
        self.config.push((key.to_owned(), value.into()));
        self
    }

    /// The command is stopped after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// At most `cap` bytes of stdout are kept (the tail).
    #[must_use]
    pub fn stdout_cap(mut self, cap: usize) -> Self {
        self.stdout_cap = cap;
        self
    }

    /// The variables `vars` (tether's own keys) removed from git's environment.
    #[must_use]
    pub fn without_env(mut self, vars: &[String]) -> Self {
        self.env_remove.extend(vars.iter().cloned());
        self
    }

    /// The arguments, for a message.
    pub fn describe(&self) -> String {
        self.args.join(" ")
    }
}

/// What a git command that ran to its end printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitOutput {
    /// Its exit code.
    pub code: i32,
    /// The tail of its stdout (at most the cap asked for), prefixed `[… N bytes cut …]` if cut.
    pub stdout: String,
    /// The tail of its stderr.
    pub stderr: String,
}

impl GitOutput {
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

/// Runs `cmd` with the neutral environment, `pinned` (`GIT_DIR`, `GIT_WORK_TREE`) when given,
/// and `config` (the neutralising configuration) after the command's own.
pub(crate) async fn exec(
    cmd: &GitCommand,
    pinned: Option<(&Path, &Path)>,
    config: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<GitOutput, GitError> {
    let mut all = cmd.config.clone();
    all.extend(config.iter().cloned());
    if let Some(hooks) = &cmd.hooks {
        all.push(("core.hooksPath".to_owned(), path_str(hooks)?));
    }
    let mut env: Vec<(String, String)> = neutral::SET
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    env.extend(neutral::config_env(&all));
    if let Some((git_dir, work_tree)) = pinned {
        env.push(("GIT_DIR".to_owned(), path_str(git_dir)?));
        env.push(("GIT_WORK_TREE".to_owned(), path_str(work_tree)?));
    }
    env.extend(cmd.env.iter().cloned());
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let mut env_remove = neutral::removed(names.iter().map(|k| k.as_os_str()));
    env_remove.extend(cmd.env_remove.iter().cloned());
    env_remove.retain(|name| !env.iter().any(|(set, _)| set == name));
    let mut argv = vec!["git".to_owned(), "--no-pager".to_owned()];
    argv.extend(cmd.args.iter().cloned());
    spawn(cmd, argv, env, env_remove, cancel).await
}

/// Runs `git <args>` from `/`, outside any repository, with the person's own configuration
/// (global and system files) and nothing else: for reading their settings.
pub(crate) async fn exec_outside(
    args: &[&str],
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<GitOutput, GitError> {
    let cmd = GitCommand::new("/", args).timeout(Duration::from_secs(10));
    let mut env_remove: Vec<String> = env_remove.to_vec();
    env_remove.extend(
        [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_CONFIG",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
        ]
        .map(str::to_owned),
    );
    let mut argv = vec!["git".to_owned(), "--no-pager".to_owned()];
    argv.extend(cmd.args.iter().cloned());
    let env = vec![("GIT_CEILING_DIRECTORIES".to_owned(), "/".to_owned())];
    spawn(&cmd, argv, env, env_remove, cancel).await
}

async fn spawn(
    cmd: &GitCommand,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    env_remove: Vec<String>,
    cancel: &CancellationToken,
) -> Result<GitOutput, GitError> {
    let spec = ProgramCommand {
        argv,
        cwd: cmd.cwd.clone(),
        input: cmd.input.clone(),
        timeout: cmd.timeout,
        kill_grace: Duration::from_secs(1),
        stdout_cap: cmd.stdout_cap,
        stderr_cap: STDERR_BYTES,
        env_remove,
        env,
        // tether's own git: never the agent's sandbox.
        sandbox: None,
    };
    let run = run_program(&spec, cancel)
        .await
        .map_err(|source| GitError::Spawn {
            what: cmd.describe(),
            source,
        })?;
    match run.end {
        ShellEnd::Exited(code) => Ok(GitOutput {
            code,
            stdout: run.stdout,
            stderr: run.stderr,
        }),
        end => Err(GitError::Unfinished {
            what: cmd.describe(),
            end: format!("{end:?}"),
        }),
    }
}

fn path_str(path: &Path) -> Result<String, GitError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| GitError::NotUtf8(path.to_path_buf()))
}
