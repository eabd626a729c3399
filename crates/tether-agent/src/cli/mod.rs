//! What every agent-CLI executor (Claude Code, Codex, pi, Qwen Code, opencode) shares, so each one is only its own
//! command line and its own stream format.
//!
//! - [`CliSettings`]: how the CLI is run (`[executor]` in tether.toml), and [`Cli`], which
//!   builds the supervised child process (own process group, timeout, null or fed stdin, the
//!   keys tether holds removed), checks the CLI's version once, and names tether's MCP server
//!   for the run (`<tether> mcp --run <id> -C <workspace>`).
//! - [`AgentCli`]: one CLI as tether knows it (its install fix, the oldest version tether
//!   supports, its sandbox needs, its key, its executor), every one registered once in
//!   [`AGENT_CLIS`]; [`Agent`] names one.
//! - [`CliError`]: the ways a CLI fails, each saying what to do.
//! - [`RunConfigDir`]: the run's own copy of the CLI's configuration directory, and the
//!   credentials that flow back from it.
//! - [`lines`]: the stream reader that keeps the raw output as the transcript and hands each
//!   complete JSON line to the CLI's own parser; [`summary`] the one-line tool-call summary.
//! - [`key`]: which variable a CLI's own configuration says its model key comes from.
//! - [`limits`]: recognising a usage or rate limit in what a CLI printed, so the loop waits it
//!   out instead of counting a failed iteration.
//! - [`resume`]: a turn that takes up the CLI's session of the last turn, or runs from a fresh
//!   context when it cannot.

mod denied;
pub mod descriptor;
pub mod key;
pub mod limits;
pub(crate) mod lines;
pub(crate) mod resume;
mod run_config;
pub(crate) mod summary;
mod version;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tether_tools::{ProgramCommand, ProgramRun, ShellEnd};

use crate::executor::ExecError;

pub use descriptor::{
    AGENT_CLIS, AgentCli, ConfigDir, ConfigFile, ConfigKind, Gate, KeyNaming, Permissions, Pin,
    Pinning, Resume, find,
};
pub use run_config::RunConfigDir;
pub use version::{Version, parse_version};

/// The MCP server name tether's tools are served under (`mcp__tether__ask_human`).
pub const SERVER: &str = "tether";

/// tether's tools as its MCP server names them.
pub const TOOL_NAMES: [&str; 4] = ["ask_human", "complete_goal", "cancel_goal", "plan_status"];

/// How long an MCP tool call may take: a human may answer days later.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// How long `<cli> --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Between SIGTERM and SIGKILL when a turn is stopped.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How much of stderr is kept for an error (the tail).
pub(crate) const MAX_STDERR: usize = 4000;

/// How much of stdout is kept in memory (the whole stream goes to the transcript).
pub(crate) const MAX_STDOUT: usize = 64 * 1024;

/// The run a turn belongs to, once it exists (the MCP server files questions under it).
pub type RunId = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// Which agent CLI: its descriptor (see [`descriptor`]).
pub type Agent = &'static AgentCli;

/// How an agent CLI is run (`[executor]` in tether.toml).
#[derive(Clone)]
pub struct CliSettings {
    /// The program (`claude`, or a path).
    pub program: String,
    /// Extra arguments, after tether's own.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// The workspace the agent works in.
    pub workspace: PathBuf,
    /// The tether binary serving the MCP tools.
    pub tether: PathBuf,
    /// Variables the CLI starts without (the keys tether holds).
    pub env_remove: Vec<String>,
    /// Extra arguments of tether's MCP server (`--drafting <dir>` in plan mode).
    pub mcp_extra: Vec<String>,
    /// The sandbox the CLI runs in, as a whole (its own sandbox is turned off under it).
    pub sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    /// The sandbox of a read-only turn (plan mode): the workspace readable, not writable.
    pub read_only_sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    /// Where a turn's files for the CLI go (its MCP configuration, pi's agent directory) when
    /// the CLI cannot see the transcripts' directory (in the sandbox); `None`: beside the
    /// transcript.
    pub scratch: Option<PathBuf>,
    /// The socket of the process driving the run, for the `tether mcp` the CLI starts inside
    /// the sandbox (`tether mcp --bridge <socket>`).
    pub bridge: Option<PathBuf>,
    /// The run's own configuration directory of the CLI, which `env` points it at; `None`: the
    /// CLI's own (pi then makes one beside the transcript).
    pub config_dir: Option<Arc<RunConfigDir>>,
}

impl CliSettings {
    /// These settings with `args` first, before the person's `[executor] args` (an ACP CLI's
    /// own arguments: `--acp`, and what tether needs of it).
    pub(crate) fn leading(mut self, args: &[&str]) -> Self {
        self.args.splice(0..0, args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// These settings with the variable `name=value` set before the person's `[executor] env`
    /// (which may still change it).
    pub(crate) fn leading_env(mut self, name: &str, value: &str) -> Self {
        self.env.insert(0, (name.to_owned(), value.to_owned()));
        self
    }

    /// The arguments of tether's MCP server for the run `run`: `mcp [--run <id>] [extra]
    /// [--bridge <socket>] -C <workspace>`.
    pub fn mcp_args(&self, run: Option<String>) -> Vec<String> {
        let mut args = vec!["mcp".to_owned()];
        if let Some(run) = run {
            args.extend(["--run".to_owned(), run]);
        }
        args.extend(self.mcp_extra.iter().cloned());
        if let Some(bridge) = &self.bridge {
            args.extend(["--bridge".to_owned(), bridge.display().to_string()]);
        }
        args.extend(["-C".to_owned(), self.workspace.display().to_string()]);
        args
    }

    /// A supervised process running `argv` in the workspace, in the agent's sandbox, with `env`
    /// then `[executor] env` set and the keys tether holds removed.
    pub fn command(
        &self,
        argv: Vec<String>,
        input: Option<Vec<u8>>,
        timeout: Duration,
        env: Vec<(String, String)>,
    ) -> ProgramCommand {
        let mut env = env;
        env.extend(self.env.iter().cloned());
        ProgramCommand {
            argv,
            cwd: self.workspace.clone(),
            input,
            timeout,
            kill_grace: KILL_GRACE,
            stdout_cap: MAX_STDOUT,
            stderr_cap: MAX_STDERR,
            env_remove: self.env_remove.clone(),
            env,
            sandbox: self.sandbox.clone(),
        }
    }
}

/// An agent CLI could not be run, or its turn failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The program is missing or does not run.
    #[error(
        "{agent} does not run: `{program} --version` {detail}; install it with `{install}` or \
         set [executor] program in tether.toml to its path",
        agent = agent.title, install = agent.install
    )]
    NotRunnable {
        /// Which CLI.
        agent: Agent,
        /// The program.
        program: String,
        /// What went wrong.
        detail: String,
    },
    /// The program could not read one of its own files in the sandbox: it is installed outside
    /// the places the sandbox grants.
    #[error(
        "{agent} cannot read {} in the sandbox: it is installed outside the places the sandbox \
         grants (its install tree as tether finds it from `{program}`, the system's trees); add \
         that directory to [sandbox] readable in tether.toml",
        path.display(), agent = agent.title
    )]
    Unreadable {
        /// Which CLI.
        agent: Agent,
        /// The program.
        program: String,
        /// The file or directory it could not read.
        path: PathBuf,
    },
    /// The program runs but is older than tether supports.
    #[error(
        "{agent} {found} is too old: tether needs {minimum} or newer; update it with \
         `{install}` or set [executor] program to a newer one",
        agent = agent.title, install = agent.install
    )]
    TooOld {
        /// Which CLI.
        agent: Agent,
        /// The version it reported.
        found: Version,
        /// The oldest supported.
        minimum: Version,
    },
    /// tether's MCP server did not connect, so the agent would run without tether's tools.
    #[error(
        "{agent} could not start tether's MCP server ({status}); check that `{tether} mcp \
         --run <run>` runs in this workspace (`tether doctor` tries it)",
        agent = agent.title
    )]
    McpNotConnected {
        /// Which CLI.
        agent: Agent,
        /// What the CLI reported.
        status: String,
        /// The tether binary named in the MCP configuration.
        tether: String,
    },
    /// The process failed or reported an error result.
    #[error("{agent} failed ({end}): {detail}", agent = agent.title)]
    Failed {
        /// Which CLI.
        agent: Agent,
        /// How it ended.
        end: String,
        /// Its error message or the end of its stderr.
        detail: String,
    },
    /// The turn ran longer than `turn_timeout_secs`.
    #[error("{agent} ran longer than {secs} s and was killed", agent = agent.title)]
    Timeout {
        /// Which CLI.
        agent: Agent,
        /// The limit.
        secs: u64,
    },
    /// A file tether writes for the CLI (its MCP configuration) could not be written.
    #[error("writing {}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// One agent CLI as configured: builds its processes and checks its version once.
pub struct Cli {
    agent: Agent,
    settings: CliSettings,
    run: RunId,
    version: OnceLock<Version>,
}

impl Cli {
    /// `agent` run with `settings`; `run` names the run once it exists.
    pub fn new(agent: Agent, settings: CliSettings, run: RunId) -> Self {
        Cli {
            agent,
            settings,
            run,
            version: OnceLock::new(),
        }
    }

    /// Which CLI.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// How it is run.
    pub fn settings(&self) -> &CliSettings {
        &self.settings
    }

    /// The run's id, once the run exists.
    pub fn run_id(&self) -> Option<String> {
        (self.run)()
    }

    /// The arguments of tether's MCP server for this run: `mcp [--run <id>] [extra] -C
    /// <workspace>`.
    pub fn mcp_args(&self) -> Vec<String> {
        self.settings.mcp_args(self.run_id())
    }

    /// Where a turn whose transcript is `transcript` writes its files for the CLI.
    pub fn turn_dir<'a>(&'a self, transcript: &'a std::path::Path) -> &'a std::path::Path {
        self.settings
            .scratch
            .as_deref()
            .unwrap_or_else(|| transcript.parent().unwrap_or(std::path::Path::new(".")))
    }

    /// [`Cli::command`] for a turn with `access`: a read-only turn in the read-only sandbox.
    pub fn turn_command(
        &self,
        access: crate::Access,
        argv: Vec<String>,
        input: Option<Vec<u8>>,
        env: Vec<(String, String)>,
    ) -> ProgramCommand {
        let mut command = self
            .settings
            .command(argv, input, self.settings.turn_timeout, env);
        if access == crate::Access::ReadOnly && self.settings.read_only_sandbox.is_some() {
            command.sandbox = self.settings.read_only_sandbox.clone();
        }
        command
    }

    /// The program followed by `args`.
    pub fn argv<'a>(&self, args: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        std::iter::once(self.settings.program.clone())
            .chain(args.into_iter().map(str::to_owned))
            .collect()
    }

    /// A [`CliError::NotRunnable`] for a program that could not start.
    pub fn not_runnable(&self, detail: String) -> CliError {
        CliError::NotRunnable {
            agent: self.agent,
            program: self.settings.program.clone(),
            detail,
        }
    }

    /// A [`CliError::Unreadable`]: `path` could not be read in the sandbox.
    pub fn unreadable(&self, path: PathBuf) -> CliError {
        CliError::Unreadable {
            agent: self.agent,
            program: self.settings.program.clone(),
            path,
        }
    }

    /// A [`CliError::Timeout`] for this CLI's turn limit.
    pub fn timed_out(&self) -> CliError {
        CliError::Timeout {
            agent: self.agent,
            secs: self.settings.turn_timeout.as_secs(),
        }
    }

    /// A [`CliError::Failed`].
    pub fn failed(&self, end: ShellEnd, detail: String) -> CliError {
        CliError::Failed {
            agent: self.agent,
            end: describe_end(end),
            detail,
        }
    }

    /// What [`crate::Executor::describe`] says of it: `claude · /usr/bin/claude`.
    pub fn label(&self) -> String {
        format!("{} · {}", self.agent.program, self.settings.program)
    }

    /// The turn stopped early: cancelled (when `cancelled`, the turn's own token fired) or over
    /// its time. `Ok` when it ran to its end, however that went.
    pub fn check_end(&self, end: ShellEnd, cancelled: bool) -> Result<(), ExecError> {
        match end {
            ShellEnd::Cancelled if cancelled => Err(ExecError::Cancelled),
            ShellEnd::TimedOut => Err(ExecError::Model(Box::new(self.timed_out()))),
            _ => Ok(()),
        }
    }

    /// How a turn that ran but did not succeed failed: a usage limit when what the CLI said
    /// (`said`, then its stderr) names one — the loop waits it out —, else
    /// [`CliError::Failed`] with `detail`.
    pub fn failure(&self, run: &ProgramRun, said: &str, detail: String) -> ExecError {
        match limits::recognise(&format!("{said}\n{}", run.stderr), limits::now_unix()) {
            Some(limit) => ExecError::UsageLimit(limit),
            None => ExecError::Model(Box::new(self.failed(run.end, detail))),
        }
    }

    /// A turn ended, however it did: the credentials the CLI refreshed in the run's
    /// configuration directory flow back to the person's.
    pub fn turn_ended(&self) {
        if let Some(dir) = &self.settings.config_dir {
            dir.keep_credentials();
        }
    }

    /// A [`CliError::McpNotConnected`] with what the CLI reported.
    pub fn mcp_not_connected(&self, status: String) -> CliError {
        CliError::McpNotConnected {
            agent: self.agent,
            status,
            tether: self.settings.tether.display().to_string(),
        }
    }
}

/// How a process ended, for people.
pub fn describe_end(end: ShellEnd) -> String {
    match end {
        ShellEnd::Exited(code) => format!("exit status {code}"),
        ShellEnd::Signalled(signal) => format!("killed by signal {signal}"),
        ShellEnd::TimedOut => "timed out".to_owned(),
        ShellEnd::Cancelled => "stopped".to_owned(),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod test_support;
