//! `ask_human` as a tool of the built-in agent.
//!
//! It applies the interaction threshold before anything reaches a person (questions asked with
//! confidence at or above the cutoff are answered by tether), then asks through the broker and
//! returns `Human replied: …` with the `thread_id` and who answered.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tether_store::RunId;
use tether_tools::{BoxFuture, FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec};

use super::broker::{Ask, Broker, BrokerError};
use super::threshold;
use crate::prompts;

/// The run a tool belongs to, set once the run exists (tools are built before it).
pub type RunCell = Arc<Mutex<Option<RunId>>>;

/// The `ask_human` tool.
pub struct AskHuman {
    spec: ToolSpec,
    broker: Broker,
    threshold: u8,
    run: RunCell,
}

impl AskHuman {
    /// The tool for `threshold` (1–5; at 0 the tool should not be offered), asking through
    /// `broker` on behalf of the run in `run`.
    pub fn new(broker: Broker, threshold: u8, run: RunCell) -> Self {
        let spec = ToolSpec {
            name: "ask_human".to_owned(),
            description: prompts::ask_human_description(threshold),
            parameters: json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "What you need decided."},
                    "context": {"type": "string", "description": "Error logs, code, options considered."},
                    "confidence": {"type": "integer", "minimum": 0, "maximum": 100,
                        "description": "How sure you are (0-100) you could resolve this without help."},
                    "thread_id": {"type": "string", "description": "Continue an earlier conversation."}
                },
                "required": ["question", "context", "confidence"],
                "additionalProperties": false
            }),
        };
        AskHuman {
            spec,
            broker,
            threshold,
            run,
        }
    }
}

fn text(args: &Value, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Tool for AskHuman {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async move {
            let question = text(&args, "question");
            if question.trim().is_empty() {
                return Ok(ToolOutput::error("`question` must not be empty"));
            }
            let confidence = args
                .get("confidence")
                .and_then(Value::as_u64)
                .map(|c| u8::try_from(c.min(100)).unwrap_or(100));
            if let Some(answer) = threshold::auto_answer(self.threshold, confidence) {
                return Ok(ToolOutput::ok(answer));
            }
            let ask = Ask {
                question,
                context: text(&args, "context"),
                confidence,
                thread_id: args
                    .get("thread_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                run: self.run.lock().ok().and_then(|r| r.clone()),
            };
            match self.broker.ask(ask, ctx.cancel_token().clone()).await {
                Ok(a) => Ok(ToolOutput::ok(prompts::human_replied(
                    &a.text,
                    &a.thread_id,
                    &a.responder,
                    &a.channel,
                ))),
                Err(e @ (BrokerError::Cancelled(_) | BrokerError::Withdrawn(_))) => {
                    Ok(ToolOutput::error(e.to_string()))
                }
                Err(BrokerError::Store(e)) => Err(FatalToolError::new("ask_human", e.to_string())),
            }
        })
    }

    fn describe_call(&self, args: &Value) -> String {
        let q: String = text(args, "question").chars().take(60).collect();
        format!("ask_human: {q}")
    }
}
