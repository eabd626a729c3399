//! Builds the executor a loop uses from `[executor]` (and `[model]`) in tether.toml. The
//! built-in agent's `ask_human` asks at the process's human desk, and its sign-off tools record
//! in the process's one store connection.

use std::sync::Arc;
use std::time::Duration;

use tether_agent::cli::Permissions;
use tether_agent::{
    AcpExecutor, Agent, BuiltinAgent, CliSettings, CommandExecutor, Executor, RunId,
};
use tether_config::Workspace;
use tether_config::{Config, Env};
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

use crate::Host;
use crate::compose::agents::Worker;
use crate::compose::sandbox::Made;
use crate::error::{Error, Result};

pub use crate::compose::agents::agent_of;

/// How long one turn of an external command may take.
const COMMAND_TURN_TIMEOUT: Duration = Duration::from_secs(3600);

/// How long one turn of an agent CLI may take by default: long enough for a human to answer.
const AGENT_TURN_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The executor configured for this workspace, its sandbox granting what tether `made` for the
/// run. Its `ask_human` questions go to `human` and are filed under the run the caller puts in
/// `run` once it exists.
pub fn from_config(
    (config, ws, made): (&Config, &Workspace, &Made),
    env: &dyn Env,
    (human, run): (&Desk, &RunCell),
    host: &Host,
) -> Result<Arc<dyn Executor>> {
    match crate::compose::agents::of_kind(config.executor.kind)? {
        Worker::Builtin => {
            let sandbox = crate::compose::sandbox::for_run(config, ws, made, host)?;
            builtin(config, ws, env, (human, run), Vec::new(), (sandbox, made))
        }
        Worker::Command => {
            if !config.human.ask_before.is_empty() {
                tracing::warn!(
                    ask_before = ?config.human.ask_before,
                    "[human] ask_before is enforced for the built-in agent only; give the \
                     command executor's agent the same rule in its own permission settings"
                );
            }
            // The program is the agent: it must not see the keys tether itself holds, and runs
            // in the sandbox whole.
            let sandbox = crate::compose::sandbox::for_run(config, ws, made, host)?;
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
        Worker::Cli(_) => {
            let desk = permissions(config, ws, (human, run));
            agent_cli((config, ws, made), (desk, run), Vec::new(), host)
        }
        Worker::Acp => acp((config, ws, made), (human, run), Vec::new(), host),
    }
}

/// An ACP agent, serving it this binary's `tether mcp` for the run in `run` (with `mcp_extra`
/// added to that server's arguments), its permission requests decided by the run's
/// `ask_before` rules and `[executor] permissions`, asking at `human`.
pub fn acp(
    (config, ws, made): (&Config, &Workspace, &Made),
    (human, run): (&Desk, &RunCell),
    mcp_extra: Vec<String>,
    host: &Host,
) -> Result<Arc<dyn Executor>> {
    let settings = cli_settings((config, ws, made), None, mcp_extra, host)?;
    let desk = permissions(config, ws, (human, run));
    Ok(Arc::new(AcpExecutor::new(settings, run_id(run), desk)))
}

/// How an ACP agent's permission requests are decided: the run's `ask_before` rules (asking at
/// `human`, filed under the run in `run`) and `[executor] permissions`.
fn permissions(config: &Config, ws: &Workspace, (human, run): (&Desk, &RunCell)) -> Permissions {
    let gate = AskBeforeGate::new(
        human.clone(),
        config.human.ask_before.clone(),
        config.plan_path(ws.root()),
        run.clone(),
    )
    .with_approvals(approvals(config, ws, human));
    Arc::new(DeskPermissions::new(gate, config.executor.permissions))
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
    (config, ws, made): (&Config, &Workspace, &Made),
    env: &dyn Env,
    (journal, human, run): (&Journal, &Desk, &RunCell),
    no_judge: bool,
    host: &Host,
) -> Result<Arc<dyn Executor>> {
    let signoff = Signoff::from_config(ws.clone(), journal.clone(), config, env, no_judge)?;
    match crate::compose::agents::of_kind(config.executor.kind)? {
        Worker::Builtin => {
            let sandbox = crate::compose::sandbox::for_run(config, ws, made, host)?;
            let signoff = signoff
                .sandboxed(sandbox.shell.clone())
                .with_network_sandbox(sandbox.shell_network.clone());
            let tools: Vec<Arc<dyn Tool>> = vec![
                Arc::new(CompleteGoal::new(signoff.clone(), run.clone())),
                Arc::new(CancelGoal::new(signoff)),
            ];
            builtin(config, ws, env, (human, run), tools, (sandbox, made))
        }
        _ => from_config((config, ws, made), env, (human, run), host),
    }
}

/// The agent CLI `[executor] kind` names (see `tether_agent::cli::AGENT_CLIS`), serving it this binary's `tether mcp` for the run in
/// `run`, with `mcp_extra` added to that server's arguments (plan mode's `--drafting <dir>`);
/// what it asks over ACP is decided by `desk`.
pub fn agent_cli(
    (config, ws, made): (&Config, &Workspace, &Made),
    (desk, run): (Permissions, &RunCell),
    mcp_extra: Vec<String>,
    host: &Host,
) -> Result<Arc<dyn Executor>> {
    let Some(agent) = agent_of(config.executor.kind) else {
        return Err(Error::NotAnAgentCli(config.executor.kind.as_str()));
    };
    // Claude Code's Bash goes through this binary's `tether gate` (a PreToolUse hook), and so
    // does pi's (an extension's tool_call handler), and an ACP CLI's commands through `desk`; a
    // CLI nothing gates is said, and what of an ACP CLI's configuration loosens its asking.
    if !config.human.ask_before.is_empty() {
        for problem in crate::compose::agents::ungated(config, ws, agent) {
            tracing::warn!(ask_before = ?config.human.ask_before, "{problem}");
        }
    }
    let settings = cli_settings((config, ws, made), Some(agent), mcp_extra, host)?;
    Ok((agent.executor)(settings, run_id(run), desk))
}

/// How the agent `[executor]` names is run (also what `tether doctor` checks): the agent CLI
/// `agent` (its `program` by default), or, with `None`, the ACP agent `program` names.
pub fn cli_settings(
    (config, ws, made): (&Config, &Workspace, &Made),
    agent: Option<Agent>,
    mcp_extra: Vec<String>,
    host: &Host,
) -> Result<CliSettings> {
    let program = config.executor.program.clone();
    let (program, title) = match agent {
        Some(agent) => (
            program.unwrap_or_else(|| agent.program.to_owned()),
            agent.title,
        ),
        None => (program.ok_or(Error::AcpNeedsProgram)?, "the ACP agent"),
    };
    settings(
        (config, ws, made),
        (&program, title, agent),
        mcp_extra,
        host,
    )
}

fn settings(
    (config, ws, made): (&Config, &Workspace, &Made),
    (program, title, agent): (&str, &str, Option<Agent>),
    mcp_extra: Vec<String>,
    host: &Host,
) -> Result<CliSettings> {
    let tether = std::env::current_exe().map_err(|cause| Error::CurrentExe {
        whose: format!("{title}'s"),
        cause,
    })?;
    let executor = &config.executor;
    let sandbox = crate::compose::sandbox::for_run(config, ws, made, host)?;
    let mut env = executor.env.clone();
    // The one goal of a goal's run in a run of many goals, in or out of a sandbox.
    if let Some(goal) = &made.goal {
        env.push((crate::compose::sandbox::GOAL_VAR.to_owned(), goal.clone()));
    }
    let config_dir =
        crate::compose::sandbox::run_config_dir(config, ws, sandbox.scratch.as_deref())?;
    if let Some((var, value, _)) = &config_dir {
        // The CLI works in the run's copy of its configuration directory.
        env.retain(|(name, _)| name != var);
        env.push((var.clone(), value.display().to_string()));
    }
    if let Some(pin) = agent.and_then(|agent| agent.pin) {
        let pinned = crate::compose::sandbox::pin(pin, ws, sandbox.pinned.as_deref(), &env)?;
        env.retain(|(name, _)| !pinned.iter().any(|(set, _)| set == name));
        env.extend(pinned);
    }
    Ok(CliSettings {
        program: program.to_owned(),
        args: executor.args.clone(),
        env,
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
        config_dir: config_dir.map(|(_, _, dir)| Arc::new(dir)),
    })
}

fn builtin(
    config: &Config,
    ws: &Workspace,
    env: &dyn Env,
    (human, run): (&Desk, &RunCell),
    extra: Vec<Arc<dyn Tool>>,
    (sandbox, made): (crate::compose::sandbox::RunSandbox, &Made),
) -> Result<Arc<dyn Executor>> {
    let Some(model) = &config.model else {
        return Err(Error::BuiltinNeedsModel);
    };
    let key = model.api_key(env)?;
    let endpoint = Endpoint::from_config(model, key);
    let client =
        tether_model::connect(endpoint, HttpOptions::default()).map_err(Error::ModelClient)?;
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
                wanted: crate::compose::sandbox::network_wanted(
                    config.plan_path(ws.root()),
                    approvals,
                    made.goal.clone(),
                ),
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

/// How a run's loop waits out its agent's usage limits: as `[executor]` says, the wait shared
/// with every run of this process whose agent reaches the same provider ([`provider_of`]).
pub fn usage_waits(config: &Config) -> tether_core::looping::UsageWaits {
    tether_core::looping::UsageWaits {
        shared: tether_core::looping::SharedWait::for_provider(&provider_of(config)),
        ..tether_core::looping::UsageWaits::from_config(&config.executor)
    }
}

/// Who a run's agent reaches, as far as its usage limits go: the executor's kind and the
/// built-in agent's endpoint and model, the command's words or the program.
fn provider_of(config: &Config) -> String {
    use tether_config::ExecutorKind;
    let e = &config.executor;
    let reach = match e.kind {
        ExecutorKind::Builtin => config
            .model
            .as_ref()
            .map(|m| format!("{} {}", m.base_url, m.model))
            .unwrap_or_default(),
        ExecutorKind::Command => e.command.join(" "),
        ExecutorKind::Acp | ExecutorKind::Cli(_) => e.program.clone().unwrap_or_default(),
    };
    format!("{} {reach}", e.kind.as_str())
}
