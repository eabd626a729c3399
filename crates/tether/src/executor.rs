//! Builds the executor a loop uses from `[executor]` (and `[model]`) in tether.toml. The
//! built-in agent's `ask_human` asks at the process's human desk, and its sign-off tools record
//! in the process's one store connection.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use tether_agent::{
    AcpExecutor, Agent, BuiltinAgent, ClaudeExecutor, CliSettings, CodexExecutor, CommandExecutor,
    Executor, PiExecutor, RunId,
};
use tether_config::Workspace;
use tether_config::{Config, Env, ExecutorKind};
use tether_core::ask_before::AskBeforeGate;
use tether_core::permissions::DeskPermissions;
use tether_core::planning::terms::Approvals;
use tether_human::Desk;
use tether_human::tool::{AskHuman, RunCell};
use tether_model::{Endpoint, HttpOptions};
use tether_signoff::Signoff;
use tether_signoff::tool::{CancelGoal, CompleteGoal};
use tether_store::Journal;
use tether_tools::{Tool, ToolOptions, ToolSet};

use crate::failure::Failure;

/// How long one turn of an external command may take.
const COMMAND_TURN_TIMEOUT: Duration = Duration::from_secs(3600);

/// How long one turn of an agent CLI may take by default: long enough for a human to answer.
const AGENT_TURN_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The executor configured for this workspace. Its `ask_human` questions go to `human` and are
/// filed under the run the caller puts in `run` once it exists.
pub fn from_config(
    config: &Config,
    ws: &Workspace,
    env: &dyn Env,
    human: &Desk,
    run: &RunCell,
) -> Result<Arc<dyn Executor>> {
    match config.executor.kind {
        ExecutorKind::Builtin => {
            let sandbox = crate::sandbox::for_run(config, ws)?;
            builtin(config, ws, env, human, run, Vec::new(), sandbox)
        }
        ExecutorKind::Command => {
            if !config.human.ask_before.is_empty() {
                tracing::warn!(
                    ask_before = ?config.human.ask_before,
                    "[human] ask_before is enforced for the built-in agent only; give the \
                     command executor's agent the same rule in its own permission settings"
                );
            }
            // The program is the agent: it must not see the keys tether itself holds, and runs
            // in the sandbox whole.
            let sandbox = crate::sandbox::for_run(config, ws)?;
            Ok(Arc::new(
                CommandExecutor::new(
                    config.executor.command.clone(),
                    ws.root().to_owned(),
                    COMMAND_TURN_TIMEOUT,
                )
                .without_vars(config.key_vars())
                .sandboxed(sandbox.agent),
            ))
        }
        ExecutorKind::Claude | ExecutorKind::Codex | ExecutorKind::Pi => {
            agent_cli(config, ws, run, Vec::new())
        }
        ExecutorKind::Acp => acp(config, ws, human, run, Vec::new()),
    }
}

/// An ACP agent, serving it this binary's `tether mcp` for the run in `run` (with `mcp_extra`
/// added to that server's arguments), its permission requests decided by the run's
/// `ask_before` rules and `[executor] permissions`, asking at `human`.
pub fn acp(
    config: &Config,
    ws: &Workspace,
    human: &Desk,
    run: &RunCell,
    mcp_extra: Vec<String>,
) -> Result<Arc<dyn Executor>> {
    Ok(Arc::new(acp_executor(config, ws, human, run, mcp_extra)?))
}

/// [`acp`], as its own type.
fn acp_executor(
    config: &Config,
    ws: &Workspace,
    human: &Desk,
    run: &RunCell,
    mcp_extra: Vec<String>,
) -> Result<AcpExecutor> {
    let settings = acp_settings(config, ws, mcp_extra)?;
    let gate = AskBeforeGate::new(
        human.clone(),
        config.human.ask_before.clone(),
        config.plan_path(ws.root()),
        run.clone(),
    )
    .with_approvals(approvals(config, ws, human));
    let desk = Arc::new(DeskPermissions::new(gate, config.executor.permissions));
    Ok(AcpExecutor::new(settings, run_id(run), desk))
}

/// How the ACP agent is run, from `[executor]` (also what `tether doctor` checks).
pub fn acp_settings(
    config: &Config,
    ws: &Workspace,
    mcp_extra: Vec<String>,
) -> Result<CliSettings> {
    let program = config.executor.program.clone().ok_or_else(|| {
        Failure::usage(anyhow!(
            "[executor] kind = \"acp\" needs program: the ACP agent to run"
        ))
    })?;
    settings(config, ws, &program, "the ACP agent", mcp_extra)
}

/// The run's id, read from `run` once it exists.
fn run_id(run: &RunCell) -> RunId {
    let run = run.clone();
    Arc::new(move || {
        run.lock()
            .ok()
            .and_then(|cell| cell.as_ref().map(ToString::to_string))
    })
}

/// The executor of a goal loop: [`from_config`], with the sign-off tools (`complete_goal`,
/// `cancel_goal`, recording in `journal`) for the built-in agent (other agents sign off with `tether goal complete`).
/// Without a `[judge]` this is a usage error saying how to configure one, unless `no_judge`.
pub fn for_goal_loop(
    config: &Config,
    ws: &Workspace,
    env: &dyn Env,
    journal: &Journal,
    human: &Desk,
    run: &RunCell,
    no_judge: bool,
) -> Result<Arc<dyn Executor>> {
    let signoff = Signoff::from_config(ws.clone(), journal.clone(), config, env, no_judge)
        .map_err(Failure::usage)?;
    match config.executor.kind {
        ExecutorKind::Builtin => {
            let sandbox = crate::sandbox::for_run(config, ws)?;
            let signoff = signoff
                .sandboxed(sandbox.shell.clone())
                .with_network_sandbox(sandbox.shell_network.clone());
            let tools: Vec<Arc<dyn Tool>> = vec![
                Arc::new(CompleteGoal::new(signoff.clone(), run.clone())),
                Arc::new(CancelGoal::new(signoff)),
            ];
            builtin(config, ws, env, human, run, tools, sandbox)
        }
        _ => from_config(config, ws, env, human, run),
    }
}

/// The agent CLI behind an executor kind, if it is one.
pub fn agent_of(kind: ExecutorKind) -> Option<Agent> {
    match kind {
        ExecutorKind::Claude => Some(Agent::Claude),
        ExecutorKind::Codex => Some(Agent::Codex),
        ExecutorKind::Pi => Some(Agent::Pi),
        ExecutorKind::Builtin | ExecutorKind::Command | ExecutorKind::Acp => None,
    }
}

/// An agent CLI (Claude Code, Codex, pi), serving it this binary's `tether mcp` for the run in
/// `run`, with `mcp_extra` added to that server's arguments (plan mode's `--drafting <dir>`).
pub fn agent_cli(
    config: &Config,
    ws: &Workspace,
    run: &RunCell,
    mcp_extra: Vec<String>,
) -> Result<Arc<dyn Executor>> {
    let Some(agent) = agent_of(config.executor.kind) else {
        return Err(Failure::usage(anyhow!(
            "executor kind `{}` is not an agent CLI tether runs",
            config.executor.kind.as_str()
        )));
    };
    // Claude Code's Bash goes through this binary's `tether gate` (a PreToolUse hook), and so
    // does pi's (an extension's tool_call handler); nothing gates Codex's commands.
    if agent == Agent::Codex && !config.human.ask_before.is_empty() {
        tracing::warn!(
            ask_before = ?config.human.ask_before,
            "[human] ask_before is not enforced for Codex: tether does not gate its commands, \
             so Codex runs, without asking, every command its workspace-write sandbox allows"
        );
    }
    let settings = cli_settings(config, ws, agent, mcp_extra)?;
    let run_id = run_id(run);
    Ok(match agent {
        Agent::Claude => Arc::new(ClaudeExecutor::new(settings, run_id)),
        Agent::Codex => Arc::new(CodexExecutor::new(settings, run_id)),
        Agent::Pi => Arc::new(PiExecutor::new(settings, run_id)),
    })
}

/// How `agent` is run, from `[executor]` (also what `tether doctor` checks).
pub fn cli_settings(
    config: &Config,
    ws: &Workspace,
    agent: Agent,
    mcp_extra: Vec<String>,
) -> Result<CliSettings> {
    let program = config
        .executor
        .program
        .clone()
        .unwrap_or_else(|| agent.program().to_owned());
    settings(config, ws, &program, agent.title(), mcp_extra)
}

/// How the external agent `program` (`title` for people) is run, from `[executor]`.
fn settings(
    config: &Config,
    ws: &Workspace,
    program: &str,
    title: &str,
    mcp_extra: Vec<String>,
) -> Result<CliSettings> {
    let tether = std::env::current_exe()
        .with_context(|| format!("finding the tether binary to serve {title}'s MCP tools"))?;
    let executor = &config.executor;
    let sandbox = crate::sandbox::for_run(config, ws)?;
    Ok(CliSettings {
        program: program.to_owned(),
        args: executor.args.clone(),
        env: executor.env.clone(),
        turn_timeout: executor
            .turn_timeout_secs
            .map_or(AGENT_TURN_TIMEOUT, Duration::from_secs),
        workspace: ws.root().to_owned(),
        tether,
        // The agent must not see the keys tether itself holds.
        env_remove: config.key_vars(),
        mcp_extra,
        sandbox: sandbox.agent,
        read_only_sandbox: sandbox.agent_read_only,
        scratch: sandbox.scratch,
        bridge: sandbox.bridge,
    })
}

fn builtin(
    config: &Config,
    ws: &Workspace,
    env: &dyn Env,
    human: &Desk,
    run: &RunCell,
    extra: Vec<Arc<dyn Tool>>,
    sandbox: crate::sandbox::RunSandbox,
) -> Result<Arc<dyn Executor>> {
    let Some(model) = &config.model else {
        return Err(Failure::usage(anyhow!(
            "the built-in agent needs a model: add a [model] table to tether.toml (api, \
             base_url, model, api_key_env), or run `tether demo` to see it with a scripted one"
        )));
    };
    let key = model.api_key(env).map_err(Failure::usage)?;
    let endpoint = Endpoint::from_config(model, key);
    let client = tether_model::connect(endpoint, HttpOptions::default())
        .context("setting up the model client")
        .map_err(Failure::usage)?;
    // The agent's shell must not see the keys tether itself holds, and runs an `ask_before`
    // command only after a human's yes.
    let approvals = approvals(config, ws, human);
    let gate = AskBeforeGate::new(
        human.clone(),
        config.human.ask_before.clone(),
        config.plan_path(ws.root()),
        run.clone(),
    )
    .with_approvals(approvals.clone());
    let options = ToolOptions {
        bash_env_remove: config.key_vars(),
        bash_sandbox: sandbox.shell,
        bash_network: sandbox
            .shell_network
            .map(|open| tether_tools::NetworkSwitch {
                open,
                wanted: crate::sandbox::network_wanted(config.plan_path(ws.root()), approvals),
            }),
        bash_gate: Some(Arc::new(gate)),
        ..ToolOptions::default()
    };
    let mut tools = ToolSet::builtin(ws.root(), &options)?;
    if let Some(ask_human) = AskHuman::for_desk(human, run) {
        tools.add(Arc::new(ask_human))?;
    }
    for tool in extra {
        tools.add(tool)?;
    }
    let describe = format!("{} {}", model.api.as_str(), model.model);
    Ok(Arc::new(BuiltinAgent::new(client, tools, describe)))
}

/// The approved contracts of the plan `config` names, read in the store `human` records in:
/// what the goals' `network:` and `ask_before:` are during a run.
fn approvals(config: &Config, ws: &Workspace, human: &Desk) -> Approvals {
    let plan = tether_core::planning::PlanRef::new(ws, config);
    Approvals::new(human.broker().journal().clone(), plan.key)
}
