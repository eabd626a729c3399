//! One agent CLI as tether knows it ([`AgentCli`]), and every one tether drives, registered
//! once ([`AGENT_CLIS`]).
//!
//! A descriptor holds what the rest of tether needs of a CLI without knowing which it is: its
//! name and install line, the oldest version tether drives (the version probe, `<program>
//! --version`, is [`Cli::check_version`](super::Cli::check_version)), what it needs in the
//! sandbox (the prefixes of its own variables, its configuration directory and what of it a run
//! copies), where its own
//! configuration names its model key, how `[human] ask_before` reaches its commands, how a turn
//! takes up the session of the last one ([`Resume`]), and its executor — its command line, how
//! it is handed tether's MCP server for the run, and its stream format, which live in the CLI's
//! own module.
//!
//! Adding an agent CLI: a module beside `claude/`, `codex/`, `pi/`, `qwen/`, `opencode/`,
//! `gemini/` and `copilot/` with its executor and its `CLI` descriptor, and a line in
//! [`AGENT_CLIS`]. A CLI that speaks ACP needs no executor of its own: its module hands tether's
//! [`AcpExecutor`](crate::AcpExecutor) the CLI's ACP arguments and the options it needs, and
//! its commands reach `[human] ask_before` as ACP permission requests ([`Gate::Acp`]). Nothing else names a CLI: its `kind` is how
//! `[executor] kind` spells it (the runtime hands every descriptor's to the configuration's
//! schema, which also writes it into the template with its `about`), and the `[executor]`
//! settings it reads (`program`, `args`, `env`, `turn_timeout_secs`) are every agent CLI's.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::key::ProviderKey;
use super::{RunId, Version};
use crate::acp::PermissionDesk;
use crate::{CliSettings, Executor};

/// How the permission requests an agent CLI sends over ACP are decided (the run's `ask_before`
/// rules, asking at the human desk): used by the CLIs tether drives through ACP.
pub type Permissions = Arc<dyn PermissionDesk>;

/// Everything tether knows of one agent CLI.
#[derive(Debug)]
pub struct AgentCli {
    /// Its `[executor] kind` in tether.toml (`claude`).
    pub kind: &'static str,
    /// Its name for people (`Claude Code`).
    pub title: &'static str,
    /// What the template `tether init` writes says of it after its kind, in the list of
    /// `[executor] kind` (`Claude Code, with tether's tools over MCP`; read after the agent
    /// before it in [`AGENT_CLIS`]).
    pub about: &'static str,
    /// The program's default name on `PATH`.
    pub program: &'static str,
    /// How to install it.
    pub install: &'static str,
    /// The oldest version tether drives: the first with every flag and event tether relies on.
    pub minimum: Version,
    /// The prefixes of the variables of its own settings (its endpoint, model, configuration
    /// directory) it gets in the sandbox, whose environment is otherwise an allow-list.
    pub env_prefixes: &'static [&'static str],
    /// Its configuration directory (settings, sessions, logs, credentials): in a run, a copy
    /// of the run's is all it writes.
    pub config_dir: ConfigDir,
    /// Where its own configuration names the variable its model key comes from, when it can
    /// (the sandbox passes exactly that variable).
    pub key: Option<KeyNaming>,
    /// How `[human] ask_before` reaches the commands it runs itself.
    pub gate: Gate,
    /// How a turn takes up the session of its last turn (`[loop] context = "continue"`).
    pub resume: Resume,
    /// What the program of an ACP adapter of this CLI is named with (`codex` in `codex-acp`):
    /// such an adapter gets this CLI's sandbox and key.
    pub acp_adapter: Option<&'static str>,
    /// Directories under `$HOME` it reads in a run beside its configuration directory (Copilot
    /// CLI's own package, which its launcher unpacks into `.cache/copilot`), granted read-only.
    pub home_reads: &'static [&'static str],
    /// Settings tether fixes for each run where the agent cannot write them (see [`Pin`]), for
    /// a CLI whose own configuration, which the agent can write, could otherwise keep its
    /// commands from reaching `[human] ask_before`.
    pub pin: Option<Pin>,
    /// Its executor with `settings`, for the run `run` names once it exists, deciding the
    /// permission requests it sends over ACP with the [`Permissions`] (a CLI that sends none
    /// ignores them).
    pub executor: fn(CliSettings, RunId, Permissions) -> Arc<dyn Executor>,
}

/// Writes the settings tether fixes for a run of an agent CLI into [`Pinning::dir`] (which the
/// run's sandbox mounts read-only: nothing the agent runs can change them), and returns the
/// variables that point the CLI at them, which it reads over every file of its own
/// configuration (Qwen Code's system settings, opencode's configuration file).
pub type Pin = fn(&Pinning<'_>) -> std::io::Result<Vec<(String, String)>>;

/// What a [`Pin`] is given.
#[derive(Debug, Clone, Copy)]
pub struct Pinning<'a> {
    /// The directory to write into, the run's own.
    pub dir: &'a Path,
    /// The workspace the CLI works in, as the run begins.
    pub workspace: &'a Path,
    /// The variables the CLI would otherwise start with (`[executor] env` and tether's own
    /// environment are read through [`Pinning::var`]).
    pub env: &'a [(String, String)],
}

impl Pinning<'_> {
    /// The variable `name` the CLI would see: `[executor] env`, else tether's environment.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    }
}

impl PartialEq for AgentCli {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl Eq for AgentCli {}

/// An agent CLI's configuration directory.
#[derive(Debug, Clone, Copy)]
pub struct ConfigDir {
    /// The variable naming it (`CLAUDE_CONFIG_DIR`).
    pub var: &'static str,
    /// Where it is under `$HOME` when the variable is not set (`.claude`).
    pub default: &'static str,
    /// Its name in the directory the variable names, when that is the home it lies in rather
    /// than the directory itself (Gemini CLI's `GEMINI_CLI_HOME` names the home of `.gemini`).
    pub within: Option<&'static str>,
    /// What a run's own copy of it holds of the person's (see
    /// [`RunConfigDir`](super::RunConfigDir)); nothing else of the person's is there.
    pub files: &'static [ConfigFile],
}

/// One entry of an agent CLI's configuration directory that a run's copy holds.
#[derive(Debug, Clone, Copy)]
pub struct ConfigFile {
    /// Its name in the directory (`settings.json`).
    pub name: &'static str,
    /// What it is, and so what flows where.
    pub kind: ConfigKind,
    /// Where it is under `$HOME` instead when no variable names the directory (Claude Code
    /// keeps `~/.claude.json` beside `~/.claude/`).
    pub unnamed: Option<&'static str>,
}

/// What an entry of an agent CLI's configuration directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// A login the CLI may refresh (JSON): copied in, and back after each turn when the CLI
    /// changed it and it still parses as the same JSON object.
    Credential,
    /// A file of settings or state: copied in; what the CLI writes to it stays in the run.
    Setting,
    /// A directory the CLI only reads (its skills, its extensions): linked, and read-only in
    /// the sandbox.
    Shared,
}

impl ConfigFile {
    /// A login, JSON.
    pub const fn credential(name: &'static str) -> Self {
        ConfigFile {
            name,
            kind: ConfigKind::Credential,
            unnamed: None,
        }
    }

    /// A file of settings or state.
    pub const fn setting(name: &'static str) -> Self {
        ConfigFile {
            name,
            kind: ConfigKind::Setting,
            unnamed: None,
        }
    }

    /// A directory the CLI only reads.
    pub const fn shared(name: &'static str) -> Self {
        ConfigFile {
            name,
            kind: ConfigKind::Shared,
            unnamed: None,
        }
    }
}

/// Where an agent CLI's own configuration names its model key's variable.
#[derive(Debug, Clone, Copy)]
pub struct KeyNaming {
    /// The provider and variables its configuration in its directory names, as it runs with
    /// `[executor] args`.
    pub read: fn(&Path, &[String]) -> ProviderKey,
    /// Where that variable is set, for the fix, given the provider's name.
    pub setting: fn(&str) -> String,
}

/// How an agent CLI takes up the session of an earlier turn. Its sessions are kept in its
/// configuration directory — the run's own copy of it in the sandbox — so they last as long as
/// the run.
#[derive(Debug, Clone, Copy)]
pub struct Resume {
    /// The session a line of its stream says the turn runs in, read from the line that shows
    /// the session started (a session that could not be taken up shows none).
    pub session: fn(&Value) -> Option<&str>,
    /// Its arguments taking session `id` up again (`--resume <id>`); the executor puts them where
    /// the CLI wants them.
    pub args: fn(&str) -> Vec<String>,
}

impl Resume {
    /// An ACP CLI's: its executor takes a session up over ACP (the kept one, or
    /// `session/load`), never by arguments.
    pub const OVER_ACP: Resume = Resume {
        session: |_| None,
        args: |_| Vec::new(),
    };
}

/// How `[human] ask_before` reaches the commands an agent CLI runs itself.
#[derive(Debug, Clone, Copy)]
pub enum Gate {
    /// A hook the CLI runs before each command runs `tether gate` (Claude Code's PreToolUse).
    Hook,
    /// An extension tether loads into the CLI asks before each command (pi's tool_call).
    Extension,
    /// The CLI asks tether before each command over ACP (`session/request_permission`), its
    /// own permissions set to ask (Qwen Code's approval mode, opencode's `permission`).
    Acp {
        /// What in the CLI's configuration may still let a command run without asking, said by
        /// the run and `tether doctor`: given the workspace and the person's configuration
        /// directory of the CLI.
        loosened: fn(&Path, &Path) -> Vec<String>,
    },
    /// Nothing: the CLI runs, without asking, every command its own sandbox `allows`.
    Ungated {
        /// Which commands those are (`every command its workspace-write sandbox allows`).
        allows: &'static str,
    },
}

impl Gate {
    /// An ACP CLI tether sets to ask on its command line, which nothing in its own
    /// configuration overrides.
    pub const ACP: Gate = Gate::Acp {
        loosened: |_, _| Vec::new(),
    };
}

/// Every agent CLI tether drives.
pub const AGENT_CLIS: &[&AgentCli] = &[
    &crate::claude::CLI,
    &crate::codex::CLI,
    &crate::pi::CLI,
    &crate::qwen::CLI,
    &crate::opencode::CLI,
    &crate::gemini::CLI,
    &crate::copilot::CLI,
];

/// The agent CLI whose `[executor] kind` is `kind`.
pub fn find(kind: &str) -> Option<&'static AgentCli> {
    AGENT_CLIS.iter().copied().find(|cli| cli.kind == kind)
}
