//! One git command, and how it runs: directly (no shell), through tether's spawner (its own
//! process group, null or given stdin, bounded in time and output), in a sandbox when it is
//! given one (see [`crate::confine`]), with the environment and configuration of
//! [`crate::neutral`].
//!
//! git's output is kept as a tail ([`GitCommand::stdout_cap`]: enough for a message or a
//! diffstat) or, for what must be read whole (a listing tether acts on), in full up to a cap
//! ([`GitCommand::whole`]): output past that cap is an error, never a part taken for the whole.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_sandbox::Sandbox;
use tether_tools::{ProgramCommand, ShellEnd, run_program_teed};
use tokio_util::sync::CancellationToken;

use crate::neutral;
use crate::{GitError, Writes};

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
    pub(crate) whole: Option<usize>,
    pub(crate) writes: Writes,
    pub(crate) scratch: Option<PathBuf>,
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
            whole: None,
            writes: Writes::Nothing,
            scratch: None,
        }
    }

    /// What the command may write of a person's repository, in its sandbox (see
    /// [`crate::GitRepo::run`]); by default nothing. tether's snapshot repository gives every
    /// command the same reach and ignores this.
    #[must_use]
    pub fn writes(mut self, writes: Writes) -> Self {
        self.writes = writes;
        self
    }

    /// A directory of tether's, made beforehand, the command may write its temporary files in
    /// (its `TMPDIR`: a hook's).
    #[must_use]
    pub fn scratch(mut self, dir: impl Into<PathBuf>) -> Self {
        self.scratch = Some(dir.into());
        self
    }

    /// Keeps all of stdout, up to `cap` bytes, in [`GitOutput::bytes`]: more than `cap` is
    /// [`GitError::Cut`], for output tether acts on and must never take in part.
    #[must_use]
    pub fn whole(mut self, cap: usize) -> Self {
        self.whole = Some(cap);
        self
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
    /// All of its stdout, as bytes, when the command asked for it whole ([`GitCommand::whole`]).
    pub bytes: Option<Vec<u8>>,
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

/// Where and how a command runs beyond its own arguments.
#[derive(Default)]
pub(crate) struct Setting<'a> {
    /// `GIT_DIR` and `GIT_WORK_TREE`.
    pub pinned: Option<(&'a Path, &'a Path)>,
    /// The neutralising configuration, after the command's own.
    pub config: &'a [(String, String)],
    /// Variables set for every command of the repository (after the neutral ones, before the
    /// command's own).
    pub env: &'a [(String, String)],
    /// The sandbox git runs in; `None` outside any.
    pub sandbox: Option<&'a Arc<Sandbox>>,
}

/// Runs `cmd` with the neutral environment and `setting`.
pub(crate) async fn exec(
    cmd: &GitCommand,
    setting: &Setting<'_>,
    cancel: &CancellationToken,
) -> Result<GitOutput, GitError> {
    let Setting {
        pinned,
        config,
        env: repo_env,
        sandbox,
    } = setting;
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
    if sandbox.is_some() {
        // The sandbox passes on only an allow-list of tether's environment: the person's
        // identity for commits goes explicitly.
        env.extend(neutral::kept());
    }
    env.extend(repo_env.iter().cloned());
    env.extend(cmd.env.iter().cloned());
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let mut env_remove = neutral::removed(names.iter().map(|k| k.as_os_str()));
    env_remove.extend(cmd.env_remove.iter().cloned());
    env_remove.retain(|name| !env.iter().any(|(set, _)| set == name));
    let mut argv = vec!["git".to_owned(), "--no-pager".to_owned()];
    argv.extend(cmd.args.iter().cloned());
    spawn(cmd, argv, (env, env_remove), sandbox.cloned(), cancel).await
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
    spawn(&cmd, argv, (env, env_remove), None, cancel).await
}

/// Runs `git <cmd's args>` outside any sandbox with the person's own configuration (global and
/// system files, and the repository's when `env` names one), `env` set, git's own variables of
/// tether's environment and `env_remove` removed: for the exchanges with a remote
/// ([`crate::remote`]).
pub(crate) async fn spawn_plain(
    cmd: &GitCommand,
    env: Vec<(String, String)>,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<GitOutput, GitError> {
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let mut remove: Vec<String> = names
        .iter()
        .filter_map(|k| k.to_str())
        // The person's own way to reach a remote over ssh stays theirs.
        .filter(|k| k.starts_with("GIT_") && !matches!(*k, "GIT_SSH" | "GIT_SSH_COMMAND"))
        .map(str::to_owned)
        .collect();
    remove.extend(env_remove.iter().cloned());
    remove.retain(|name| !env.iter().any(|(set, _)| set == name));
    let mut argv = vec!["git".to_owned(), "--no-pager".to_owned()];
    argv.extend(cmd.args.iter().cloned());
    spawn(cmd, argv, (env, remove), None, cancel).await
}

async fn spawn(
    cmd: &GitCommand,
    argv: Vec<String>,
    (env, env_remove): (Vec<(String, String)>, Vec<String>),
    sandbox: Option<Arc<Sandbox>>,
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
        // tether's own git: never the agent's sandbox, a sandbox of its own when given one.
        sandbox,
    };
    let mut whole = Whole::new(cmd.whole.unwrap_or(0));
    let run = run_program_teed(&spec, cancel, &mut whole)
        .await
        .map_err(|source| GitError::Spawn {
            what: cmd.describe(),
            source,
        })?;
    let bytes = match cmd.whole {
        None => None,
        Some(cap) if whole.over => {
            return Err(GitError::Cut {
                what: cmd.describe(),
                cap,
            });
        }
        Some(_) => Some(whole.bytes),
    };
    match run.end {
        ShellEnd::Exited(code) => Ok(GitOutput {
            code,
            stdout: run.stdout,
            stderr: run.stderr,
            bytes,
        }),
        end => Err(GitError::Unfinished {
            what: cmd.describe(),
            end: format!("{end:?}"),
        }),
    }
}

/// Every byte of a stream up to a cap, and whether there were more (then nothing past the cap
/// is kept). Never fails a write: the command runs to its end either way.
struct Whole {
    cap: usize,
    bytes: Vec<u8>,
    over: bool,
}

impl Whole {
    fn new(cap: usize) -> Self {
        Whole {
            cap,
            bytes: Vec::new(),
            over: false,
        }
    }
}

impl std::io::Write for Whole {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_sub(self.bytes.len());
        if buf.len() > room {
            self.over = true;
        }
        self.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(crate) fn path_str(path: &Path) -> Result<String, GitError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| GitError::NotUtf8(path.to_path_buf()))
}
