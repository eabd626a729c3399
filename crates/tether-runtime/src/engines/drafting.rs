//! The restricted agent plan mode drafts with. With `[executor] kind = "claude" | "codex" |
//! "pi"` it is that agent CLI in its read-only mode (an ACP agent: its read-only turns, where
//! only reads and tether's tools are allowed), with plan mode's `write_plan` and
//! `edit_plan` served by `tether mcp --drafting <dir>` (the baseline the writes are checked
//! against is saved in `dir`); otherwise the built-in agent on `[model]`, with the read-only
//! workspace tools plus the plan tools, on plan mode's model: `[planning]` over `[model]`, and
//! `tether plan new --model` over both. Both get the drafting system prompt. Kept apart from
//! `compose/executor.rs`, whose agents have every tool.

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use tether_agent::{ExecError, TurnOutcome, TurnRequest};
use tether_human::tool::RunCell;
use tokio_util::sync::CancellationToken;

use tether_agent::{AgentEvent, BuiltinAgent, Executor, TurnObserver};
use tether_config::Workspace;
use tether_config::{Config, Env};
use tether_core::planning::{Baseline, Drafter, PlanRef, PlanTarget, drafting_tools};
use tether_model::{Endpoint, HttpOptions};

use crate::Host;
use crate::compose::sandbox::Made;
use crate::error::{Error, Result};

/// Plan mode's session on `config`'s plan in `ws` for `objective`: the drafter, starting from
/// the plan as it is (which must parse), with its transcripts in a directory of its own under
/// the state directory, and a description of its agent for status lines; `model_name`
/// overrides the built-in agent's model (`tether plan new --model`).
pub fn session(
    config: &Config,
    (ws, env): (&Workspace, &dyn Env),
    objective: &str,
    model_name: Option<&str>,
    host: &Host,
) -> Result<(Drafter, String)> {
    let plan = PlanRef::new(ws, config);
    let baseline = Baseline::read(&plan).map_err(Error::PlanToDraftFrom)?;
    let target = PlanTarget {
        plan: plan.clone(),
        baseline: baseline.clone(),
    };
    let transcripts = ws
        .state_dir()
        .join("drafts")
        .join(tether_store::now_ms().to_string());
    let (executor, describe) = agent(config, (ws, env), target, &transcripts, model_name, host)?;
    let drafter = Drafter::new(executor, plan, baseline, transcripts, objective);
    Ok((drafter, describe))
}

/// The drafting agent for `target`, and a description of it for status lines; `session` is the
/// drafting session's directory (its transcripts, and the baseline an agent CLI's MCP server
/// reads); `model_name` overrides the model's name (`tether plan new --model`).
pub fn agent(
    config: &Config,
    (ws, env): (&Workspace, &dyn Env),
    target: PlanTarget,
    session: &Path,
    model_name: Option<&str>,
    host: &Host,
) -> Result<(Arc<dyn Executor>, String)> {
    let kind = config.executor.kind;
    let acp = kind == tether_config::ExecutorKind::Acp;
    if acp || crate::compose::executor::agent_of(kind).is_some() {
        if model_name.is_some() {
            return Err(Error::ModelFlagForAgent {
                kind: kind.as_str(),
                with: if acp {
                    "that agent and its own model"
                } else {
                    "that agent CLI and its own model (set it in the CLI's args)"
                },
            });
        }
        // An agent CLI drafts in its read-only mode; an ACP agent's turns may read (anything
        // else is refused without asking). Either writes the plan through `tether mcp
        // --drafting`.
        return external(&target, session, |extra| match acp {
            true => read_only_acp(config, ws, extra, host),
            // Drafting turns are read-only: an ACP CLI may read, and nothing else.
            false => crate::compose::executor::agent_cli(
                (config, ws, &Made::default()),
                (Arc::new(tether_agent::acp::AllowReads), &RunCell::default()),
                extra,
                host,
            ),
        });
    }
    let Some(mut model) = config.planning_model() else {
        return Err(Error::PlanningNeedsModel);
    };
    if let Some(name) = model_name {
        name.clone_into(&mut model.model);
    }
    let model = &model;
    let key = model.api_key(env)?;
    let client = tether_model::connect(Endpoint::from_config(model, key), HttpOptions::default())
        .map_err(Error::ModelClient)?;
    let tools = drafting_tools(ws.root(), target)?;
    let describe = format!("{} {}", model.api.as_str(), model.model);
    let agent = BuiltinAgent::new(client, tools, describe.clone())
        .with_system(tether_core::prompts::drafting::SYSTEM);
    Ok((Arc::new(agent), describe))
}

/// The ACP agent `[executor]` names, allowed to read and nothing else.
fn read_only_acp(
    config: &Config,
    ws: &Workspace,
    mcp_extra: Vec<String>,
    host: &Host,
) -> Result<Arc<dyn Executor>> {
    let settings = crate::compose::executor::cli_settings(
        (config, ws, &Made::default()),
        None,
        mcp_extra,
        host,
    )?;
    Ok(Arc::new(tether_agent::AcpExecutor::new(
        settings,
        Arc::new(|| None),
        Arc::new(tether_agent::acp::AllowReads),
    )))
}

/// An agent of its own process drafting: the plan's baseline saved for its `tether mcp
/// --drafting` (the arguments `build` is given), the drafting instructions opening each prompt.
fn external(
    target: &PlanTarget,
    session: &Path,
    build: impl FnOnce(Vec<String>) -> Result<Arc<dyn Executor>>,
) -> Result<(Arc<dyn Executor>, String)> {
    save_baseline(target, session)?;
    let inner = build(vec!["--drafting".to_owned(), session.display().to_string()])?;
    let describe = inner.describe();
    let agent = Preamble {
        inner,
        text: tether_core::prompts::drafting::SYSTEM_CLI,
    };
    Ok((Arc::new(agent), describe))
}

/// Saves the plan's baseline in the drafting session's directory, for the drafting agent's
/// `tether mcp --drafting`.
fn save_baseline(target: &PlanTarget, session: &Path) -> Result<()> {
    target
        .baseline
        .save(session)
        .map_err(|cause| Error::PlanFile {
            what: "saving the plan's baseline for the drafting agent",
            cause,
        })
}

/// An agent CLI takes no system prompt of tether's: the drafting instructions open each prompt.
struct Preamble {
    inner: Arc<dyn Executor>,
    text: &'static str,
}

impl Executor for Preamble {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn run_turn<'a>(
        &'a self,
        mut request: TurnRequest,
        observer: &'a dyn TurnObserver,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>> {
        request.prompt = format!("{}\n\n{}", self.text, request.prompt);
        self.inner.run_turn(request, observer, cancel)
    }
}

/// Shows the drafting agent's tool calls on stderr as they happen, one line each.
pub struct Progress;

impl TurnObserver for Progress {
    fn event(&self, event: AgentEvent) {
        if let AgentEvent::ToolCall {
            summary, is_error, ..
        } = event
        {
            let mark = if is_error { "✗" } else { "·" };
            eprintln!("  {mark} {}", tether_human::visible::one_line(&summary));
        }
    }
}
