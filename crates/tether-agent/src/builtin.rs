//! The built-in agent: one turn is model calls and tool executions until the model answers
//! without calling a tool. That last answer is the turn's final message.
//!
//! A turn starts from a fresh conversation (the system prompt and the loop's prompt), so nothing
//! carries over between iterations except the workspace itself — unless it asks to continue
//! ([`Context::Continue`](crate::Context::Continue)): then the conversation of the last turn
//! that completed is kept in memory and goes on with the shorter prompt (after a failed turn,
//! or in a new process, the turn starts fresh). Every message is appended to the turn's
//! transcript as it happens, so a killed turn leaves a readable record.
//!
//! The agent calls its tools through the [`ToolSet`] registry as it is: the set's specs are the
//! request's tools, and its outcomes are the tool messages and the journal's summaries. Anything
//! the model got wrong comes back to it as an error result; a [`FatalToolError`] ends the turn
//! at once ([`ExecError::Tool`]), recorded in the transcript.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tether_model::{Message, ModelClient, ModelError, Request, ToolCall};
use tether_tools::{FatalToolError, ToolCallOutcome, ToolContext, ToolOutput, ToolSet};

use crate::executor::{AgentEvent, ExecError, Turn, TurnOutcome, Turns};
use crate::prompts;
use crate::session::{Kept, Start};

/// The default cap on model calls in one turn.
pub const DEFAULT_MAX_STEPS: u32 = 60;

/// tether's own agent.
pub struct BuiltinAgent {
    model: Arc<dyn ModelClient>,
    tools: ToolSet,
    describe: String,
    max_steps: u32,
    system: String,
    /// The conversation of the last completed turn, for a turn that continues it.
    kept: Kept<Vec<Message>>,
}

impl BuiltinAgent {
    /// An agent calling `model`, with `tools`; `describe` names the model for status lines.
    pub fn new(model: Arc<dyn ModelClient>, tools: ToolSet, describe: String) -> Self {
        BuiltinAgent {
            model,
            tools,
            describe,
            max_steps: DEFAULT_MAX_STEPS,
            system: prompts::SYSTEM.to_owned(),
            kept: Kept::default(),
        }
    }

    /// Replaces the system prompt (default [`prompts::SYSTEM`]), for an agent with another job
    /// and other tools, such as plan mode's read-only drafting agent.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = system.into();
        self
    }

    /// Caps the model calls of one turn.
    pub fn with_max_steps(mut self, max_steps: u32) -> Self {
        self.max_steps = max_steps.max(1);
        self
    }

    /// Runs one of the model's tool calls; arguments that are not JSON go back to the model
    /// without reaching the tool.
    async fn call_tool(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
    ) -> Result<ToolCallOutcome, FatalToolError> {
        match call.arguments_error() {
            Some(problem) => Ok(ToolCallOutcome {
                output: ToolOutput::error(format!(
                    "{problem}; call `{}` again with a JSON object",
                    call.name
                )),
                summary: format!("{}: malformed arguments", call.name),
                elapsed: std::time::Duration::ZERO,
            }),
            None => {
                self.tools
                    .call(&call.name, call.arguments.clone(), ctx)
                    .await
            }
        }
    }
}

impl Turns for BuiltinAgent {
    fn label(&self) -> String {
        format!("builtin · {}", self.describe)
    }

    async fn turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        let (mut messages, earlier) = match self.kept.start(&turn.request.context) {
            Start::Continue { session, prompt } => {
                let earlier = session.len();
                let mut messages = session;
                messages.push(Message::user(prompt));
                (messages, earlier)
            }
            Start::Fresh { why } => {
                if let Some(reason) = why {
                    turn.observer.event(AgentEvent::FreshContext { reason });
                }
                (vec![Message::user(turn.request.prompt.clone())], 0)
            }
        };
        let result = self.converse(turn, &mut messages, earlier).await;
        self.kept.settle(&result, Some(messages), String::new);
        result
    }
}

impl BuiltinAgent {
    /// Model calls and tool executions on `messages` until the model answers without a tool
    /// call; the first `earlier` messages are the conversation this turn continues (already in
    /// an earlier turn's transcript).
    async fn converse(
        &self,
        turn: Turn<'_>,
        messages: &mut Vec<Message>,
        earlier: usize,
    ) -> Result<TurnOutcome, ExecError> {
        let mut transcript = Transcript::create(&turn.request.transcript)?;
        let system = self.system.as_str();
        transcript.write(&json!({"role": "system", "text": system}))?;
        if earlier > 0 {
            let note = format!("continues the conversation of the last turn ({earlier} messages)");
            transcript.write(&json!({"role": "note", "text": note}))?;
        }
        let specs = self.tools.specs();
        let ctx = ToolContext::new(turn.cancel.clone());
        transcript.message(&messages[earlier])?;
        let mut outcome = TurnOutcome::default();
        for _ in 0..self.max_steps {
            let call = Request::new(messages.clone())
                .with_system(system)
                .with_tools(specs.clone());
            let response = match self.model.complete(&call, turn.cancel.clone()).await {
                Ok(r) => r,
                Err(ModelError::Cancelled) => return Err(ExecError::Cancelled),
                Err(e) => return Err(ExecError::Model(Box::new(e))),
            };
            outcome.input_tokens += response.usage.input_tokens;
            outcome.cached_input_tokens += response.usage.cached_input_tokens;
            outcome.cache_write_input_tokens += response.usage.cache_write_input_tokens;
            outcome.output_tokens += response.usage.output_tokens;
            turn.observer.event(AgentEvent::ModelCall {
                input_tokens: response.usage.input_tokens,
                output_tokens: response.usage.output_tokens,
            });
            let message = response.to_message();
            transcript.message(&message)?;
            messages.push(message);
            if response.tool_calls.is_empty() {
                outcome.final_message = response.text;
                return Ok(outcome);
            }
            for call in &response.tool_calls {
                if turn.cancel.is_cancelled() {
                    return Err(ExecError::Cancelled);
                }
                // A cancelled turn ends now, even if the tool is stuck (a blocking read on
                // tokio's blocking pool cannot be interrupted; it is left to finish alone).
                let Some(called) = turn
                    .cancel
                    .run_until_cancelled(self.call_tool(call, &ctx))
                    .await
                else {
                    return Err(ExecError::Cancelled);
                };
                let done = match called {
                    Ok(done) => done,
                    Err(fatal) => {
                        transcript.write(&json!({"role": "error", "text": fatal.to_string()}))?;
                        return Err(ExecError::Tool(fatal));
                    }
                };
                outcome.tool_calls += 1;
                turn.observer.event(AgentEvent::ToolCall {
                    tool: call.name.clone(),
                    summary: done.summary,
                    is_error: done.output.is_error,
                });
                // The output's note (timings, counts) is in the summary only, so the model's
                // view stays stable and prompts stay cacheable.
                let message = Message::Tool {
                    tool_call_id: call.id.clone(),
                    content: done.output.content,
                    is_error: done.output.is_error,
                };
                transcript.message(&message)?;
                messages.push(message);
            }
            if turn.cancel.is_cancelled() {
                return Err(ExecError::Cancelled);
            }
        }
        Err(ExecError::TooManySteps(self.max_steps))
    }
}

/// The turn's JSON-lines transcript.
struct Transcript {
    file: File,
    path: std::path::PathBuf,
}

impl Transcript {
    fn create(path: &Path) -> Result<Self, ExecError> {
        let err = |source| ExecError::Transcript {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(err)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(err)?;
        Ok(Transcript {
            file,
            path: path.to_owned(),
        })
    }

    fn write(&mut self, value: &serde_json::Value) -> Result<(), ExecError> {
        writeln!(self.file, "{value}").map_err(|source| ExecError::Transcript {
            path: self.path.clone(),
            source,
        })
    }

    fn message(&mut self, message: &Message) -> Result<(), ExecError> {
        let value = serde_json::to_value(message).unwrap_or(serde_json::Value::Null);
        self.write(&value)
    }
}
