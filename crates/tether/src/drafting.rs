//! The restricted built-in agent plan mode drafts with: the configured `[model]`, the read-only
//! workspace tools plus the plan-only tools, and the drafting system prompt. Kept apart from
//! `executor.rs`, whose agents have every tool.

use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow};
use tether_agent::{AgentEvent, BuiltinAgent, Executor, TurnObserver};
use tether_config::Workspace;
use tether_config::{Config, Env};
use tether_core::planning::{PlanTarget, drafting_tools};
use tether_model::{Endpoint, HttpOptions};

use crate::failure::Failure;

/// The drafting agent for `target`, and a description of its model for status lines.
pub fn agent(
    config: &Config,
    ws: &Workspace,
    env: &dyn Env,
    target: PlanTarget,
) -> Result<(Arc<dyn Executor>, String)> {
    let Some(model) = &config.model else {
        return Err(Failure::usage(anyhow!(
            "plan mode drafts goals with the built-in agent, which needs a model: add a [model] \
             table to tether.toml (api, base_url, model, api_key_env); or write goals into the \
             plan by hand and lock them with `tether plan approve`"
        )));
    };
    let key = model.api_key(env).map_err(Failure::usage)?;
    let client = tether_model::connect(Endpoint::from_config(model, key), HttpOptions::default())
        .context("setting up the model client")
        .map_err(Failure::usage)?;
    let tools = drafting_tools(ws.root(), target)?;
    let describe = format!("{} {}", model.api.as_str(), model.model);
    let agent = BuiltinAgent::new(client, tools, describe.clone())
        .with_system(tether_core::prompts::drafting::SYSTEM);
    Ok((Arc::new(agent), describe))
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
