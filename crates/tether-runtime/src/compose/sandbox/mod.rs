//! The one place a run's sandbox is built: from `[sandbox]`, the working tree, what tether made
//! for the run and the executor.
//!
//! What a sandboxed child may do:
//! - read the system's trees, the toolchains under `$HOME` (when present, narrowed to what holds
//!   no credential: see `home`), the tether binary itself (agents run `tether mcp`; never
//!   its directory, which may be the home directory or `/tmp`), `[sandbox] readable`, the working
//!   tree, and for a worktree tether created the repository it shares with its checkout;
//! - write the working tree, a private temporary directory (`TMPDIR`) and `[sandbox] writable`;
//! - not write `.git` nor `tether.toml` (bind-mounted read-only: hooks and config are code that
//!   runs later, outside any sandbox, and the settings that bound the agent), not see `.tether/`
//!   (tether's store, transcripts and logs), not signal tether, hold no capability, and reach the
//!   network only when allowed;
//! - find nothing in `/tmp`, `/run` or the home directory but what it is granted there, not even
//!   a Unix socket to connect to (a terminal multiplexer's, the session bus, an SSH agent's);
//! - have no terminal (a session of its own) and no descriptor tether inherited;
//! - see only an allow-listed environment: never tether's keys.
//!
//! Every grant beyond the working tree and the temporary directory is decided in `grants`, from
//! paths tether knows (the person's configuration, what it found, what it made) and never from
//! one the agent wrote: no `.git` file, `commondir` or link in the tree is followed to a grant,
//! and no grant is `/`, the home directory or a directory holding it.
//!
//! An external agent (`kind = "command"`, or an agent CLI) runs in the sandbox whole. The
//! tether commands the agent runs (`tether goal complete`, `tether ask`, its `tether mcp`, the
//! `tether gate` hook…) reach the store through the process driving the run (see `bridge`),
//! which runs them as the agent, and what they run for it (a sign-off's verify) in these same
//! sandboxes: a run builds them once, here. An agent CLI also reads its install tree and its
//! shared configuration, writes the run's own copy of its configuration directory (see `cli`
//! and `tether_agent::cli::RunConfig`), reads the settings tether pins for it (`pinned`,
//! read-only), and has the network, and the variable its own
//! configuration names for its model key (see `agent_key`).

mod cli;
mod credential;
mod grants;
mod home;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_config::{Config, ExecutorKind, SandboxMode, Workspace};
use tether_sandbox::{Policy, Sandbox, Support};

use crate::Host;
use crate::compose::agents::Worker;
use crate::error::{Error, Result};

pub use cli::{config_dir, run_config_dir};
pub use grants::GrantError;

/// What tether made for a run that its sandbox grants: never read from the working tree, where
/// the agent writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Made {
    /// The git directory a worktree tether created shares with its checkout (its objects and
    /// refs), which the run's commands read.
    pub repository: Option<PathBuf>,
    /// The one goal of a goal's run in a run of many goals: its agent and commands find it in
    /// `TETHER_GOAL`, and only its contract opens the network.
    pub goal: Option<String>,
}

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
    /// A directory the agent CLI reads and nothing in the sandbox writes (mounted read-only,
    /// inside the private temporary directory): the settings tether pins for the run (see
    /// `tether_agent::cli::Pin`).
    pub pinned: Option<PathBuf>,
}

/// Builds the run's sandboxes for the working tree at `ws`'s root (the checkout, or the run's
/// worktree), granting what tether `made` for the run; refused, naming what is missing, when the
/// kernel cannot enforce them, and naming the setting when `[sandbox]` asks to grant `/` or the
/// home directory. The tether commands the agent runs inside reach `host`'s bridge handler.
pub fn for_run(config: &Config, ws: &Workspace, made: &Made, host: &Host) -> Result<RunSandbox> {
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
    let tmp = private_tmp()?;
    let ground = grants::Ground {
        home: home_dir().map(grants::Place::resolve),
        writable: vec![
            grants::Place::resolve(ws.root()),
            grants::Place::resolve(&tmp),
        ],
    };
    let worker = crate::compose::agents::sandboxed_as(config)?;
    let mut asked = shared_reads(config, made);
    let areas = [ws.root(), tmp.as_path()];
    match worker {
        Worker::Cli(agent_cli) => {
            asked.extend(cli::CliReach::of(config, agent_cli, &areas).asked());
        }
        Worker::Acp | Worker::Command => {
            asked.extend(cli::CliReach::program(config, &areas).asked());
        }
        Worker::Builtin => {}
    }
    let grants = decided(&ground, &asked)?;
    if made.repository.is_none() {
        linked_worktree_said(ws.root());
    }
    // The store is out of sight in the sandbox: tether commands the agent runs reach it
    // through this process, and what they run for it runs in these same sandboxes.
    let listener = crate::compose::bridge::bind(&tmp)?;
    let bridge = listener.path().to_path_buf();
    let sandbox = |policy: Policy| -> Result<Sandbox> {
        let mut child = Sandbox::new(policy.hide(ws.state_dir()), support)?
            .within(pids.clone())
            .tmpdir(&tmp)
            .var(crate::compose::bridge::BRIDGE_VAR, &bridge);
        if let Some(goal) = &made.goal {
            child = child.var(GOAL_VAR, goal);
        }
        Ok(child.env(config.sandbox.env.iter().cloned()))
    };
    // What every child of the run may read and write; an agent CLI also its own reach.
    let policy =
        |writable_tree: bool, cli: bool| base_policy(ws.root(), writable_tree, &tmp, &grants, cli);
    let shell = sandbox(policy(true, false).network(config.sandbox.network))?;
    let shell_network = sandbox(policy(true, false).network(true))?;
    let mut out = RunSandbox {
        shell: Some(Arc::new(shell)),
        shell_network: Some(Arc::new(shell_network)),
        bridge: Some(bridge.clone()),
        ..RunSandbox::default()
    };
    match worker {
        Worker::Builtin => {}
        Worker::Command | Worker::Acp => {
            // An ACP agent talks to its model itself: the network stays open for it.
            let network = config.sandbox.network || config.executor.kind == ExecutorKind::Acp;
            // Its program's install tree and Node's are readable, as an agent CLI's are.
            let agent = sandbox(policy(true, true).network(network))?
                .env(["TETHER_RUN_ID".to_owned(), "TETHER_CONFIG".to_owned()]);
            out.agent = Some(Arc::new(agent));
        }
        Worker::Cli(agent_cli) => {
            let scratch = tmp.join("agent");
            let pinned = tmp.join("agent-pinned");
            for dir in [&scratch, &pinned] {
                std::fs::create_dir_all(dir).map_err(|e| Error::creating(dir, e))?;
            }
            let key_vars = agent_key_vars(config);
            let make = |writable_tree: bool| -> Result<Sandbox> {
                let policy = policy(writable_tree, true).read_only(&pinned);
                let mut agent = sandbox(policy.network(true))?;
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
            out.pinned = Some(pinned);
        }
    }
    listener.serve(ws, config.clone(), out.clone(), host.bridge.clone())?;
    Ok(out)
}

/// The grants `asked` for under `ground`, with what was left out said.
fn decided(ground: &grants::Ground, asked: &[grants::Asked]) -> Result<grants::Decided> {
    let decided = grants::decide(ground, asked)?;
    for left in &decided.left_out {
        tracing::warn!("{left}");
    }
    Ok(decided)
}

/// Says, when the working tree's `.git` is a file (a linked worktree tether did not make for
/// this run), that the sandbox does not follow it: it may be the agent's.
fn linked_worktree_said(tree: &Path) {
    let dot_git = tree.join(".git");
    if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_file()) {
        tracing::warn!(
            path = %dot_git.display(),
            "the working tree's .git is a file naming a repository elsewhere; the sandbox never \
             follows it (the agent could have written it), so git commands in the sandbox cannot \
             read that repository: name its git directory in [sandbox] readable, or run with \
             --worktree, whose repository tether grants itself"
        );
    }
}

/// The variables the agent CLI's own configuration names for its model key (see
/// `agent_key`), said in the log; what is wrong with them, warned.
fn agent_key_vars(config: &Config) -> Vec<String> {
    let Some(key) = crate::compose::agent_key::of(config) else {
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

/// The home directory, when tether knows it.
fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// What every child is granted beyond the system and the working tree, asked once per run: the
/// person's `[sandbox] readable` and `writable`, the toolchains in the home directory, the tether
/// binary itself, and the repository of a worktree tether made.
fn shared_reads(config: &Config, made: &Made) -> Vec<grants::Asked> {
    use grants::{Asked, Place, Source};
    let ask = |source, path: &Path| Asked {
        source,
        place: Place::resolve(path),
    };
    let mut asked = Vec::new();
    for dir in &config.sandbox.readable {
        asked.push(ask(Source::Readable, dir));
    }
    for dir in &config.sandbox.writable {
        asked.push(ask(Source::Writable, dir));
    }
    if let Some(home) = home_dir() {
        for path in home::toolchains(&home, |name| std::env::var_os(name)) {
            asked.push(ask(Source::Found, &path));
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        asked.push(ask(Source::Made, &exe));
    }
    if let Some(repository) = &made.repository {
        // A worktree's objects and refs live in the checkout's git directory.
        asked.push(ask(Source::Made, repository));
    }
    asked
}

/// What every child of the run may read and write: the working tree `tree` (writable when
/// `writable_tree`), the private temporary directory `tmp`, and the `decided` grants (those of
/// an agent CLI's reach only with `cli`).
fn base_policy(
    tree: &Path,
    writable_tree: bool,
    tmp: &Path,
    decided: &grants::Decided,
    cli: bool,
) -> Policy {
    use grants::{Access, Reach, Source};
    let mut policy = if writable_tree {
        Policy::new().write(tree)
    } else {
        Policy::new().read(tree)
    };
    policy = policy.write(tmp);
    for path in read_only(tree) {
        policy = policy.read_only(path);
    }
    for grant in decided
        .grants
        .iter()
        .filter(|g| cli || g.source != Source::Agent)
    {
        let path = grant.path.clone();
        policy = match (grant.access, grant.reach) {
            (Access::Read, Reach::Followed) => policy.read_if_present(path),
            (Access::Write, Reach::Followed) => policy.write(path),
            (Access::Read, Reach::Unlinked) => policy.read_unlinked(path),
            (Access::Write, Reach::Unlinked) => policy.write_unlinked(path),
        };
    }
    // Not even a socket in the home directory (an SSH or GPG agent's) is there to connect to.
    if let Some(home) = home_dir() {
        policy = policy.cover(home);
    }
    policy
}

/// What stays read-only in the working tree `tree`: `.git`, and the configuration tether reads
/// (`tether.toml`, and the file `TETHER_CONFIG` names when it lies in the tree). A missing one
/// has nothing to keep: a `tether.toml` the agent creates is not the one the run started with
/// (the run keeps the settings it recorded at its start).
fn read_only(tree: &Path) -> Vec<PathBuf> {
    let mut paths = vec![tree.join(".git"), tree.join(tether_config::FILE_NAME)];
    if let Some(named) = std::env::var_os(tether_config::CONFIG_ENV).filter(|v| !v.is_empty()) {
        let named = tree.join(named);
        if named.starts_with(tree)
            && !named
                .components()
                .any(|c| c == std::path::Component::ParentDir)
        {
            paths.push(named);
        }
    }
    paths
}

/// The settings `pin` fixes for the run of an agent CLI in the workspace `ws`, written into the
/// sandbox's `pinned` directory (read-only to everything the agent runs), or without a sandbox
/// into a directory of the run's own; the variables that point the CLI at them, given the
/// variables `env` it would otherwise start with.
pub fn pin(
    pin: tether_agent::cli::Pin,
    ws: &Workspace,
    pinned: Option<&Path>,
    env: &[(String, String)],
) -> Result<Vec<(String, String)>> {
    let dir = match pinned {
        Some(dir) => dir.to_path_buf(),
        None => private_tmp()?,
    };
    pin(&tether_agent::cli::Pinning {
        dir: &dir,
        workspace: ws.root(),
        env,
    })
    .map_err(|e| Error::io("pinning the agent's settings for the run", e))
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

/// The variable naming the one goal a goal's run of a run of many goals works on.
pub const GOAL_VAR: &str = "TETHER_GOAL";

/// Whether a goal of the plan at `plan` that opens the network (`network: on`, in its approved
/// contract: see `approvals`) is active — of a run working on one goal (`only`), that goal —:
/// read again before each command, as the plan changes during a run.
pub fn network_wanted(
    plan: std::path::PathBuf,
    approvals: tether_core::planning::terms::Approvals,
    only: Option<String>,
) -> Arc<dyn Fn() -> bool + Send + Sync> {
    Arc::new(move || {
        tether_plan::file::read(&plan).is_ok_and(|doc| {
            doc.plan().active_goals().any(|g| {
                only.as_deref().is_none_or(|only| g.id() == Some(only)) && approvals.network(g)
            })
        })
    })
}

#[cfg(test)]
mod network_tests {
    use tether_core::planning::terms::Approvals;
    use tether_store::{Journal, Store};

    use super::network_wanted;

    const PLAN: &str = "# Plan\n\n## Goal: A\n<!-- id: a -->\nstatus: active\nnetwork: on\n\
                        done_when: x\n\n## Goal: B\n<!-- id: b -->\nstatus: active\ndone_when: y\n";

    #[test]
    fn a_run_of_one_goal_opens_the_network_only_for_that_goals_contract() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.md");
        std::fs::write(&plan, PLAN).unwrap();
        let store = Store::open_in_memory().unwrap();
        let doc = tether_plan::file::read(&plan).unwrap();
        let a = doc.plan().goal("a").unwrap();
        store
            .approve_contract("plan.md", "a", &a.contract_hash(), "ana")
            .unwrap();
        let approvals = Approvals::new(Journal::new(store, Vec::new()).unwrap(), "plan.md");
        let wanted = |only: Option<&str>| {
            network_wanted(plan.clone(), approvals.clone(), only.map(str::to_owned))()
        };
        assert!(
            wanted(None),
            "a's approved network: on opens it for the whole plan"
        );
        assert!(wanted(Some("a")));
        assert!(!wanted(Some("b")), "b's run works on b alone");
    }
}
