//! `ask_human` as a tool of the built-in agent.
//!
//! The behaviour lives in [`super::asking`], shared with the MCP server: the interaction
//! threshold is applied before anything reaches a person (questions asked with confidence at or
//! above the cutoff are answered by tether), misconfigured channels give a tool error naming
//! what is missing, and otherwise the broker asks and `Human replied: …` comes back with the
//! `thread_id` and who answered.

use serde_json::Value;
use tether_tools::{FatalToolError, ToolContext, ToolOutput, ToolSpec, TypedTool};

use crate::asking::{self, AskFailed, Reply};
use crate::desk::Desk;
use crate::prompts;

pub use tether_store::RunCell;

/// The `ask_human` tool.
pub struct AskHuman {
    spec: ToolSpec,
    desk: Desk,
    run: RunCell,
}

impl AskHuman {
    /// The tool asking at `desk` on behalf of the run in `run`. At threshold 0 it should not be
    /// offered (see [`AskHuman::for_desk`]); if it is, it answers that asking is disabled.
    pub fn new(desk: Desk, run: RunCell) -> Self {
        let spec = ToolSpec {
            name: asking::NAME.to_owned(),
            description: prompts::ask_human_description(desk.policy().threshold),
            parameters: asking::parameters(),
        };
        AskHuman { spec, desk, run }
    }

    /// The tool for `desk`, or `None` when its threshold (0) says the agent may not ask.
    pub fn for_desk(desk: &Desk, run: &RunCell) -> Option<Self> {
        (desk.policy().threshold > 0).then(|| AskHuman::new(desk.clone(), run.clone()))
    }
}

impl TypedTool for AskHuman {
    /// Checked against the schema, then read leniently by [`asking::question_from_args`] (shared
    /// with MCP) into the one question type that goes on to the store.
    type Args = Value;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// A store that fails while asking ends the turn; a cancelled question is an error result.
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, FatalToolError> {
        let mut question = asking::question_from_args(&args);
        question.run_id = self.run.lock().ok().and_then(|r| r.clone());
        let cancel = ctx.cancel_token().clone();
        match self.desk.ask_human(question, cancel).await {
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
        let q: String = asking::question_from_args(args)
            .question
            .chars()
            .take(60)
            .collect();
        format!("ask_human: {q}")
    }
}
