//! `ask_human` as a tool of the built-in agent.
//!
//! The behaviour lives in [`super::asking`], shared with the MCP server: the interaction
//! threshold is applied before anything reaches a person (questions asked with confidence at or
//! above the cutoff are answered by tether), misconfigured channels give a tool error naming
//! what is missing, and otherwise the broker asks and `Human replied: …` comes back with the
//! `thread_id` and who answered.

use serde_json::Value;
use tether_tools::{FatalToolError, ToolContext, ToolOutput, ToolSpec, TypedTool};

use super::asking::{self, AskFailed, AskHumanArgs, AskPolicy, Reply};
use super::broker::Broker;
use crate::prompts;

pub use tether_store::RunCell;

/// The `ask_human` tool.
pub struct AskHuman {
    spec: ToolSpec,
    broker: Broker,
    policy: AskPolicy,
    run: RunCell,
}

impl AskHuman {
    /// The tool for `threshold` (1–5; at 0 the tool should not be offered), asking through
    /// `broker` on behalf of the run in `run`.
    pub fn new(broker: Broker, threshold: u8, run: RunCell) -> Self {
        let spec = ToolSpec {
            name: asking::NAME.to_owned(),
            description: prompts::ask_human_description(threshold),
            parameters: asking::parameters(),
        };
        AskHuman {
            spec,
            broker,
            policy: AskPolicy {
                threshold,
                problems: Vec::new(),
            },
            run,
        }
    }

    /// Channels that could not be set up (each naming what is missing): every call that needs
    /// a human then fails with a tool error naming them.
    pub fn with_problems(mut self, problems: Vec<String>) -> Self {
        self.policy.problems = problems;
        self
    }
}

impl TypedTool for AskHuman {
    type Args = AskHumanArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// A store that fails while asking ends the turn; a cancelled question is an error result.
    async fn run(
        &self,
        args: AskHumanArgs,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, FatalToolError> {
        let run = self.run.lock().ok().and_then(|r| r.clone());
        let cancel = ctx.cancel_token().clone();
        match asking::ask_human(&self.policy, &self.broker, args, run, cancel).await {
            Ok(Reply::Answered { text, .. }) => Ok(ToolOutput::ok(text)),
            Ok(Reply::Refused(text)) => Ok(ToolOutput::error(text)),
            Err(e @ AskFailed::Cancelled(_)) => Ok(ToolOutput::error(e.to_string())),
            Err(AskFailed::Store(e)) => Err(FatalToolError::with_source(
                asking::NAME,
                "the store failed while asking",
                e,
            )),
        }
    }

    fn describe_call(&self, args: &Value) -> String {
        let q: String = AskHumanArgs::from_json(args)
            .question
            .chars()
            .take(60)
            .collect();
        format!("ask_human: {q}")
    }
}
