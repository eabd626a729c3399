//! `complete_goal` and `cancel_goal` as tools of the built-in agent.
//!
//! Refusals and rejects are results the model reads and acts on, never failures of the turn;
//! only a failing store or file system ends the turn ([`FatalToolError`]). A cancelled attempt
//! (Ctrl+C, `tether cancel`) is an error result, as for `ask_human`.
//!
//! For the goal loop: build one [`Signoff`] (`Signoff::from_config`), add
//! `CompleteGoal::new(signoff.clone(), run_cell)` and `CancelGoal::new(signoff)` to the agent's
//! tool set, and put the run id into the cell once the run exists.

use serde_json::{Value, json};
use tether_tools::{FatalToolError, ToolContext, ToolOutput, ToolSpec, TypedTool};

use super::{CancelOutcome, Signoff, SignoffError, SignoffOutcome};
use crate::prompts;
use tether_store::RunCell;

/// The `complete_goal` tool.
pub struct CompleteGoal {
    spec: ToolSpec,
    signoff: Signoff,
    run: RunCell,
}

impl CompleteGoal {
    /// The tool signing goals off with `signoff`, filing attempts under the run in `run` once it
    /// exists.
    pub fn new(signoff: Signoff, run: RunCell) -> Self {
        let spec = ToolSpec {
            name: "complete_goal".to_owned(),
            description: prompts::COMPLETE_GOAL_DESCRIPTION.to_owned(),
            parameters: complete_goal_parameters(),
        };
        CompleteGoal { spec, signoff, run }
    }
}

/// The `cancel_goal` tool.
pub struct CancelGoal {
    spec: ToolSpec,
    signoff: Signoff,
}

impl CancelGoal {
    /// The tool cancelling goals of `signoff`'s plan.
    pub fn new(signoff: Signoff) -> Self {
        let spec = ToolSpec {
            name: "cancel_goal".to_owned(),
            description: prompts::CANCEL_GOAL_DESCRIPTION.to_owned(),
            parameters: cancel_goal_parameters(),
        };
        CancelGoal { spec, signoff }
    }
}

/// `complete_goal`'s JSON Schema (shared by the built-in agent's tool and MCP).
pub fn complete_goal_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The goal's id (from `<!-- id: … -->` in the plan)."},
            "evidence": {"type": "string", "description": "What you did and why done_when is met: commands run and what they showed."},
            "paths": {"type": "array", "items": {"type": "string"},
                "description": "Files that show it (code, tests), relative to the workspace root."}
        },
        "required": ["id", "evidence"],
        "additionalProperties": false
    })
}

/// `cancel_goal`'s JSON Schema (shared by the built-in agent's tool and MCP).
pub fn cancel_goal_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The goal's id."},
            "reason": {"type": "string", "description": "Why the goal is cancelled, in one sentence."}
        },
        "required": ["id", "reason"],
        "additionalProperties": false
    })
}

/// `complete_goal`'s arguments, read the same way by the built-in agent's tool and by MCP
/// ([`CompleteArgs::from_json`], which deserialising also uses).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "Value")]
pub struct CompleteArgs {
    /// The goal's id.
    pub id: String,
    /// What the agent did and why the goal is met.
    pub evidence: String,
    /// The files that show it.
    pub paths: Vec<String>,
}

impl CompleteArgs {
    /// Reads the arguments; an empty `id` is the error the agent reads.
    pub fn from_json(args: &Value) -> Result<Self, &'static str> {
        let id = text(args, "id");
        if id.is_empty() {
            return Err("`id` must name a goal of the plan");
        }
        let paths = args
            .get("paths")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Ok(CompleteArgs {
            id,
            evidence: text(args, "evidence"),
            paths,
        })
    }
}

impl TryFrom<Value> for CompleteArgs {
    type Error = &'static str;

    fn try_from(args: Value) -> Result<Self, Self::Error> {
        Self::from_json(&args)
    }
}

/// `cancel_goal`'s arguments, read the same way by the built-in agent's tool and by MCP.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(from = "Value")]
pub struct CancelArgs {
    /// The goal's id.
    pub id: String,
    /// Why it is cancelled.
    pub reason: String,
}

impl CancelArgs {
    /// Reads the arguments; missing texts are empty (the plan refuses an unknown id).
    pub fn from_json(args: &Value) -> Self {
        CancelArgs {
            id: text(args, "id"),
            reason: text(args, "reason"),
        }
    }
}

impl From<Value> for CancelArgs {
    fn from(args: Value) -> Self {
        Self::from_json(&args)
    }
}

fn text(args: &Value, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// A failing store or file system ends the turn; the rest (a cancellation, a plan that could not
/// be patched, a verify that could not start) is an error result the model reads.
fn fatal(tool: &str, e: SignoffError) -> Result<ToolOutput, FatalToolError> {
    match e {
        SignoffError::Store(_) | SignoffError::Io { .. } => Err(FatalToolError::with_source(
            tool,
            "the store or the file system failed",
            e,
        )),
        SignoffError::Cancelled
        | SignoffError::PlanNotPatched { .. }
        | SignoffError::VerifyStart { .. } => Ok(ToolOutput::error(e.to_string())),
    }
}

impl TypedTool for CompleteGoal {
    type Args = CompleteArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(
        &self,
        args: CompleteArgs,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, FatalToolError> {
        let run = self.run.lock().ok().and_then(|r| r.clone());
        let signoff = self.signoff.clone().with_run(run);
        let outcome = signoff
            .complete(&args.id, &args.evidence, &args.paths, ctx.cancel_token())
            .await;
        match outcome {
            Ok(o @ SignoffOutcome::Refused { .. }) => Ok(ToolOutput::error(o.tool_text())),
            Ok(o) => {
                let note = match &o {
                    SignoffOutcome::Accepted { .. } => "accepted",
                    _ if o.judge_unavailable() => "judge unavailable",
                    _ => "rejected",
                };
                Ok(ToolOutput::ok(o.tool_text()).with_note(note))
            }
            Err(e) => fatal("complete_goal", e),
        }
    }

    fn describe_call(&self, args: &Value) -> String {
        format!("complete_goal {}", text(args, "id"))
    }
}

impl TypedTool for CancelGoal {
    type Args = CancelArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(
        &self,
        args: CancelArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, FatalToolError> {
        match self.signoff.cancel_goal(&args.id, &args.reason) {
            Ok(o @ CancelOutcome::Cancelled { .. }) => {
                Ok(ToolOutput::ok(o.tool_text()).with_note("cancelled"))
            }
            Ok(o @ CancelOutcome::Refused { .. }) => Ok(ToolOutput::error(o.tool_text())),
            Err(e) => fatal("cancel_goal", e),
        }
    }

    fn describe_call(&self, args: &Value) -> String {
        format!("cancel_goal {}", text(args, "id"))
    }
}
