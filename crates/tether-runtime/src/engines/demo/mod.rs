//! `tether demo`'s run composed: a fresh workspace with a plan of one goal (its contract
//! approved), the scripted agent asking a human and signing off through the scripted judge, its
//! commands in the sandbox where the kernel can enforce it. The models are scripted (see
//! [`script`]); everything else is real.

pub mod script;
pub mod story;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_agent::BuiltinAgent;
use tether_config::{Config, Workspace};
use tether_core::goal::{self, GoalEnd, GoalSpec, RuleSettings};
use tether_core::looping::{Deps, UsageWaits};
use tether_human::tool::{AskHuman, RunCell};
use tether_human::{Channel, ChannelAnswer, Desk};
use tether_model::scripted::ScriptedModel;
use tether_signoff::tool::{CancelGoal, CompleteGoal};
use tether_signoff::{Judge, Signoff};
use tether_store::{EventSink, Journal, Question, RunId, Store};
use tether_tools::{ToolOptions, ToolSet};
use tokio_util::sync::CancellationToken;

use crate::Host;
use crate::compose::sandbox::RunSandbox;
use crate::error::{Error, Result};

/// The demo's plan file, as its store knows it.
pub const PLAN_FILE: &str = "plan.md";

/// Writes the demo's files into `dir` and opens its store, recording in a journal with `sinks`,
/// with the goal's contract approved.
pub fn set_up(dir: &Path, sinks: Vec<Arc<dyn EventSink>>) -> Result<(Workspace, Journal)> {
    let ws = Workspace::at(dir);
    for (name, text) in script::FILES {
        std::fs::write(dir.join(name), text)
            .map_err(|e| Error::io(format!("writing {name}"), e))?;
    }
    let state = ws.state_dir();
    std::fs::create_dir_all(&state).map_err(|e| Error::creating(&state, e))?;
    let journal = Journal::new(Store::open(ws.db_path())?, sinks)?;
    let doc = tether_plan::PlanDoc::parse(PLAN_FILE, script::PLAN);
    for g in &doc.plan().goals {
        if let Some(id) = g.id() {
            journal.store().approve_contract_terms(
                PLAN_FILE,
                id,
                &g.contract_hash(),
                &tether_core::planning::terms::written(g),
                "tether demo",
            )?;
        }
    }
    Ok((ws, journal))
}

/// Answers every question at once, for `--yes` and runs without a terminal.
pub struct AutoAnswer;

impl Channel for AutoAnswer {
    fn name(&self) -> &'static str {
        "demo"
    }

    async fn offer(&self, _question: &Question, _stop: CancellationToken) -> Option<ChannelAnswer> {
        Some(ChannelAnswer::text(
            script::AUTO_ANSWER,
            "tether demo --yes",
        ))
    }
}

/// The demo's run, composed.
pub struct Demo {
    deps: Deps,
    cell: RunCell,
    /// Why the scripted agent's commands run without the sandbox, when the kernel cannot
    /// enforce it.
    pub unsandboxed: Option<String>,
}

impl Demo {
    /// The scripted agent in `ws`, recording in `journal`, asking at `human`.
    pub fn new(ws: &Workspace, journal: &Journal, human: Desk, host: &Host) -> Result<Self> {
        let judge = Judge::new(
            Arc::new(ScriptedModel::new(script::judge())),
            "scripted judge",
            Duration::from_secs(60),
        );
        // The scripted agent's commands run sandboxed like a real one's, where the kernel can.
        let (sandbox, unsandboxed) = match tether_sandbox::Support::probe().check() {
            Ok(()) => (
                crate::compose::sandbox::for_run(
                    &Config::defaults(crate::schema()),
                    ws,
                    &crate::compose::sandbox::Made::default(),
                    host,
                )?,
                None,
            ),
            Err(e) => (RunSandbox::default(), Some(e.to_string())),
        };
        let cell = RunCell::default();
        let git = if unsandboxed.is_some() {
            tether_git::Confinement::Unconfined
        } else {
            tether_git::Confinement::Sandboxed
        };
        let signoff = Signoff::new(ws.clone(), journal.clone(), PLAN_FILE)
            .with_judge(Some(judge))
            .sandboxed(sandbox.shell.clone())
            .with_git(git);
        let options = ToolOptions {
            bash_sandbox: sandbox.shell,
            ..ToolOptions::default()
        };
        let mut tools = ToolSet::builtin(ws.root(), &options)?;
        tools.add(Arc::new(AskHuman::new(human.clone(), cell.clone())))?;
        tools.add(Arc::new(CompleteGoal::new(signoff.clone(), cell.clone())))?;
        tools.add(Arc::new(CancelGoal::new(signoff)))?;
        let agent = BuiltinAgent::new(
            Arc::new(ScriptedModel::new(script::agent())),
            tools,
            "scripted demo model".into(),
        );
        let deps = Deps {
            ws: ws.clone(),
            journal: journal.clone(),
            executor: Arc::new(agent),
            human,
            usage: UsageWaits::default(),
            price: None,
            loop_judge: None,
            env_remove: Vec::new(),
            git,
            isolation: Default::default(),
            // A throwaway workspace of its own: no tether.toml of the person's to keep to.
            bounds: None,
            pool: None,
        };
        Ok(Demo {
            deps,
            cell,
            unsandboxed,
        })
    }

    /// Runs the goal loop to its end.
    pub async fn run(&self) -> Result<(RunId, GoalEnd)> {
        let cell = &self.cell;
        let on_start = |run: &RunId| {
            if let Ok(mut c) = cell.lock() {
                *c = Some(run.clone());
            }
        };
        Ok(goal::start(&self.deps, spec(), CancellationToken::new(), on_start).await?)
    }
}

/// The demo's run: its one goal, five iterations at most.
fn spec() -> GoalSpec {
    GoalSpec {
        plan: PLAN_FILE.into(),
        max_iterations: Some(5),
        budget: tether_store::Budget::default(),
        threshold: 2,
        no_judge: false,
        rules: RuleSettings::default(),
        max_consecutive_failures: 3,
        context: tether_config::IterationContext::Fresh,
        scope: None,
        settling: None,
    }
}
