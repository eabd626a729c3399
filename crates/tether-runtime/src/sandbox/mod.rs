//! The one place a run's sandbox is built: from `[sandbox]`, the working tree and the executor.
//!
//! What a sandboxed child may do:
//! - read the system's trees, the toolchains under `$HOME` (when present, narrowed to what holds
//!   no credential: see `home`), the tether binary itself (agents run `tether mcp`; never
//!   its directory, which may be the home directory or `/tmp`), `[sandbox] readable` and the
//!   working tree;
//! - write the working tree, a private temporary directory (`TMPDIR`) and `[sandbox] writable`;
//! - not write `.git` (bind-mounted read-only: hooks and config are code that runs later, outside
//!   any sandbox), not see `.tether/` (tether's store, transcripts and logs), not signal tether,
//!   hold no capability, and reach the network only when allowed;
//! - find nothing in `/tmp`, `/run` or the home directory but what it is granted there, not even
//!   a Unix socket to connect to (a terminal multiplexer's, the session bus, an SSH agent's);
//! - have no terminal (a session of its own) and no descriptor tether inherited;
//! - see only an allow-listed environment: never tether's keys.
//!
//! An external agent (`kind = "command"`, or an agent CLI) runs in the sandbox whole. The
//! tether commands the agent runs (`tether goal complete`, `tether ask`, its `tether mcp`, the
//! `tether gate` hook…) reach the store through the process driving the run (see `bridge`),
//! which runs them as the agent, and what they run for it (a sign-off's verify) in these same
//! sandboxes: a run builds them once, here. An agent CLI also reads its install tree and writes its own
//! configuration directory, and has the network (see `cli`), and the variable its own
//! configuration names for its model key (see `agent_key`).

mod cli;
mod credential;
mod home;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_config::{Config, ExecutorKind, SandboxMode, Workspace};
use tether_sandbox::{Policy, Sandbox, Support};

use crate::Host;
use crate::agents::Worker;
use crate::error::{Error, Result};

pub use cli::config_dir;

/// The sandboxes of one run: the built-in agent's shell and the verify commands, and an
/// external agent as a whole. `None` when `[sandbox] mode = "off"`.
#[derive(Clone, Default)]
pub struct RunSandbox {
    /// For the built-in agent's `bash` and for verify commands.
    pub shell: Option<Arc<Sandbox>>,
    /// The same with the network open, for a goal with `network: on`.
    pub shell_network: Option<Arc<Sandbox>>,
    /// For an external agent (a command or an agent CLI), whole.
    pub agent: Option<Arc<Sandbox>>,
    /// For an agent CLI's read-only turn (plan mode): the working tree readable only.
    pub agent_read_only: Option<Arc<Sandbox>>,
    /// The socket tether commands inside the sandbox reach this process through.
    pub bridge: Option<PathBuf>,
    /// A directory the agent CLI can read for its turn's files (MCP configuration, pi's agent
    /// directory), inside the sandbox's private temporary directory.
    pub scratch: Option<PathBuf>,
}

/// Builds the run's sandboxes for the working tree at `ws`'s root (the checkout, or the run's
/// worktree); refused, naming what is missing, when the kernel cannot enforce them. The tether
/// commands the agent runs inside reach `host`'s bridge handler.
pub fn for_run(config: &Config, ws: &Workspace, host: &Host) -> Result<RunSandbox> {
    if config.sandbox.mode == SandboxMode::Off {
        tracing::warn!(
            "the sandbox is off ([sandbox] mode = \"off\" in tether.toml): the agent's commands \
             can read your keys and files, write .git and tether's store, and reach the network"
        );
        host.run_unconfined();
        return Ok(RunSandbox::default());
    }
    let support = Support::probe();
    // Every child of the run runs in the run's PID namespace, and ends with the run.
    let pids = host.run_namespace()?;
    let reads = shared_reads();
    let tmp = private_tmp()?;
    // The store is out of sight in the sandbox: tether commands the agent runs reach it
    // through this process, and what they run for it runs in these same sandboxes.
    let listener = crate::bridge::bind(&tmp)?;
    let bridge = listener.path().to_path_buf();
    let sandbox = |policy: Policy| -> Result<Sandbox> {
        Ok(Sandbox::new(policy.hide(ws.state_dir()), support)?
            .within(pids.clone())
            .tmpdir(&tmp)
            .var(crate::bridge::BRIDGE_VAR, &bridge)
            .env(config.sandbox.env.iter().cloned()))
    };
    let shell = sandbox(
        base_policy(config, ws.root(), true, &tmp, &reads).network(config.sandbox.network),
    )?;
    let shell_network = sandbox(base_policy(config, ws.root(), true, &tmp, &reads).network(true))?;
    let mut out = RunSandbox {
        shell: Some(Arc::new(shell)),
        shell_network: Some(Arc::new(shell_network)),
        bridge: Some(bridge.clone()),
        ..RunSandbox::default()
    };
    match crate::agents::sandboxed_as(config)? {
        Worker::Builtin => {}
        Worker::Command | Worker::Acp => {
            // An ACP agent talks to its model itself: the network stays open for it.
            let network = config.sandbox.network || config.executor.kind == ExecutorKind::Acp;
            let policy = base_policy(config, ws.root(), true, &tmp, &reads).network(network);
            let agent =
                sandbox(policy)?.env(["TETHER_RUN_ID".to_owned(), "TETHER_CONFIG".to_owned()]);
            out.agent = Some(Arc::new(agent));
        }
        Worker::Cli(agent_cli) => {
            let scratch = tmp.join("agent");
            std::fs::create_dir_all(&scratch).map_err(|e| Error::creating(&scratch, e))?;
            let cli = cli::CliReach::of(config, agent_cli)?;
            let key_vars = agent_key_vars(config);
            let make = |writable_tree: bool| -> Result<Sandbox> {
                let policy = cli.open(base_policy(config, ws.root(), writable_tree, &tmp, &reads));
                let mut agent = sandbox(policy.network(true))?;
                for (name, value) in &cli.vars {
                    agent = agent.var(name.clone(), value.clone());
                }
                // The variables of the CLI's own settings (its endpoint, model, configuration
                // directory); the one its configuration names for its key comes on top.
                for prefix in agent_cli.env_prefixes {
                    agent = agent.env_prefix(*prefix);
                }
                Ok(agent
                    .env(key_vars.iter().cloned())
                    .env(["TETHER_RUN_ID".to_owned(), "TETHER_CONFIG".to_owned()]))
            };
            out.agent = Some(Arc::new(make(true)?));
            out.agent_read_only = Some(Arc::new(make(false)?));
            out.scratch = Some(scratch);
        }
    }
    listener.serve(ws, config.clone(), out.clone(), host.bridge.clone())?;
    Ok(out)
}

/// The variables the agent CLI's own configuration names for its model key (see
/// `agent_key`), said in the log; what is wrong with them, warned.
fn agent_key_vars(config: &Config) -> Vec<String> {
    let Some(key) = crate::agent_key::of(config) else {
        return Vec::new();
    };
    for note in &key.key.notes {
        tracing::warn!("{note}");
    }
    if let Some((problem, fix)) = key.problem(config, &tether_config::ProcessEnv) {
        tracing::warn!("{problem}: {fix}");
    }
    let passed = key.passed(config);
    if !passed.is_empty() {
        tracing::info!(
            vars = %passed.join(", "),
            "passing the variables {} names for its key to the agent",
            key.whose()
        );
    }
    passed
}

/// What every child reads beyond the system and the working tree, found once per run: the
/// toolchains in the home directory, and the tether binary itself.
fn shared_reads() -> Vec<PathBuf> {
    let mut reads = match std::env::var_os("HOME").map(PathBuf::from) {
        Some(home) => home::toolchains(&home, |name| std::env::var_os(name)),
        None => Vec::new(),
    };
    reads.extend(std::env::current_exe().ok());
    reads
}

/// What every child of the run may read and write.
fn base_policy(
    config: &Config,
    tree: &Path,
    writable_tree: bool,
    tmp: &Path,
    reads: &[PathBuf],
) -> Policy {
    let mut policy = if writable_tree {
        Policy::new().write(tree)
    } else {
        Policy::new().read(tree)
    };
    policy = policy.write(tmp).read_only(tree.join(".git"));
    if let Some(common) = linked_git_dir(tree) {
        // A worktree's objects and refs live in the checkout's git directory.
        policy = policy.read(common);
    }
    for path in reads {
        policy = policy.read_if_present(path);
    }
    // Not even a socket in the home directory (an SSH or GPG agent's) is there to connect to.
    if let Some(home) = std::env::var_os("HOME") {
        policy = policy.cover(home);
    }
    for dir in &config.sandbox.readable {
        policy = policy.read_if_present(dir);
    }
    for dir in &config.sandbox.writable {
        policy = policy.write(dir);
    }
    policy
}

/// The git directory a linked worktree at `tree` shares with its checkout: its `.git` is a
/// file `gitdir: <checkout>/.git/worktrees/<name>`, whose `commondir` names the shared one.
fn linked_git_dir(tree: &Path) -> Option<PathBuf> {
    let dot_git = tree.join(".git");
    if !std::fs::symlink_metadata(&dot_git).ok()?.is_file() {
        return None;
    }
    let text = read_small(&dot_git)?;
    let gitdir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    let gitdir = if gitdir.is_absolute() {
        gitdir
    } else {
        tree.join(gitdir)
    };
    let common = read_small(&gitdir.join("commondir"))
        .map_or_else(|| gitdir.join("../.."), |c| gitdir.join(c.trim()));
    std::fs::canonicalize(common).ok()
}

/// A small text file (a `.git` pointer), at most 4 KiB.
fn read_small(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// A directory only this run's children use for temporary files (`TMPDIR`), mode 0700.
fn private_tmp() -> Result<PathBuf> {
    let dir = tempfile::Builder::new()
        .prefix("tether-run-")
        .tempdir()
        .map_err(|e| Error::io("creating the sandbox's private temporary directory", e))?;
    // Kept for the run's life (children may leave files the next iteration reads); the system
    // cleans its temporary directory.
    Ok(dir.keep())
}

/// Whether a goal of the plan at `plan` that opens the network (`network: on`, in its approved
/// contract: see `approvals`) is active: read again before each command, as the plan changes
/// during a run.
pub fn network_wanted(
    plan: std::path::PathBuf,
    approvals: tether_core::planning::terms::Approvals,
) -> Arc<dyn Fn() -> bool + Send + Sync> {
    Arc::new(move || {
        tether_plan::file::read(&plan)
            .is_ok_and(|doc| doc.plan().active_goals().any(|g| approvals.network(g)))
    })
}
