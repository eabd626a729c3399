//! The executor contract: one agent turn, observed as it happens.
//!
//! The loops (Ralph, goal) do not care who does the work. They hand an executor a prompt, watch
//! the tool calls it reports, and read its final message; every driver (the built-in agent, and
//! the external agent CLIs) implements this one trait — through [`Turns`], which lets each
//! write its turn as one `async fn` of a [`Turn`].
//!
//! A turn starts from a fresh context unless its request says [`Context::Continue`]: then the
//! executor takes up the session of its last turn (the CLI resumes it, the built-in agent keeps
//! its conversation) with the shorter prompt given there. An executor that cannot — nothing to
//! take up, the session is gone, the last turn failed — runs the turn from a fresh context with
//! the whole prompt, and reports why ([`AgentEvent::FreshContext`]) unless there was simply
//! nothing yet.

use std::path::PathBuf;

use futures_util::future::BoxFuture;
use serde::Serialize;
use tether_tools::FatalToolError;
use tokio_util::sync::CancellationToken;

/// What one turn is asked to do.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The loop's iteration number (1-based), for transcripts and events.
    pub iteration: u32,
    /// The user-role prompt for this turn, whole: what a fresh context is given.
    pub prompt: String,
    /// Whether the turn may continue the agent's session of its last turn.
    pub context: Context,
    /// Where the turn's transcript (JSON lines) goes.
    pub transcript: PathBuf,
    /// What the agent may do to the workspace in this turn.
    pub access: Access,
}

/// What a turn starts from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Context {
    /// A fresh context: the agent gets the request's whole prompt and nothing else.
    #[default]
    Fresh,
    /// The agent's session of its last turn, taken up again with this prompt (what is new since
    /// that turn); when there is none to take up, a fresh context with the whole prompt.
    Continue(String),
}

/// What an agent may do to the workspace in a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Access {
    /// Work: edit files and run commands, within the agent's own permission settings.
    #[default]
    Work,
    /// Read only (plan mode drafting): read and search the workspace, change nothing, run no
    /// commands. An agent CLI runs with its own read-only mode; the built-in agent is given
    /// read-only tools by whoever builds it.
    ReadOnly,
}

/// Something that happened during a turn, reported as it happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The agent called a tool; `summary` is one short line (`edit src/lib.rs`).
    ToolCall {
        /// The tool's name.
        tool: String,
        /// A one-line summary of the call and its result.
        summary: String,
        /// Whether the tool reported an error to the model.
        is_error: bool,
    },
    /// The agent asked permission for a tool call, and it was decided.
    Permission {
        /// The kind of tool (`execute`, `edit`, …).
        tool: String,
        /// What it wanted to do, in one line.
        summary: String,
        /// Whether the call may run.
        allowed: bool,
        /// Who decided (`tether` for a rule, else the person who answered).
        by: String,
        /// The option chosen, or why it was refused.
        decision: String,
    },
    /// The turn was asked to continue the agent's last session but started from a fresh
    /// context instead.
    FreshContext {
        /// Why (the session could not be resumed, the last turn failed, …).
        reason: String,
    },
    /// A model call finished.
    ModelCall {
        /// Input tokens of the call.
        input_tokens: u64,
        /// Output tokens of the call.
        output_tokens: u64,
    },
}

/// Receives a turn's events as they happen (the loop records each one in the store).
pub trait TurnObserver: Send + Sync {
    /// Called for every event, in order.
    fn event(&self, event: AgentEvent);
}

/// How a turn ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnOutcome {
    /// The agent's final message of the turn (the text after its last tool call).
    pub final_message: String,
    /// How many tool calls the turn made.
    pub tool_calls: u32,
    /// Input tokens of all of the turn's model calls, cache reads and writes included.
    pub input_tokens: u64,
    /// Of those, the tokens read from the provider's prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, the tokens written to the provider's prompt cache.
    pub cache_write_input_tokens: u64,
    /// Tokens produced by all of the turn's model calls.
    pub output_tokens: u64,
    /// What the turn cost in US dollars, when the agent reports it (Claude Code does).
    pub cost_usd: Option<f64>,
}

/// A turn failed. The loop records it and decides whether to go on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The turn was cancelled (Ctrl+C, `tether cancel`); nothing to retry.
    #[error("the turn was cancelled")]
    Cancelled,
    /// The model (or the external agent) failed after its own retries; the next iteration may
    /// succeed.
    #[error("the agent's model failed")]
    Model(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A tool failed in a way the model cannot fix (the store or file system behind it is
    /// gone): the turn stopped at that call. The next iteration may succeed once it is back.
    #[error(transparent)]
    Tool(#[from] FatalToolError),
    /// The agent cannot run until its setup is fixed (a missing CLI, tether's tools not
    /// reaching it): stop the run and say how to fix it; retrying would not help.
    #[error("the agent cannot run")]
    Setup(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The agent hit a usage or rate limit: not a failure of its work. The loop waits (until
    /// the reset when known, else with backoff) and runs the same iteration again.
    #[error("the agent hit a usage limit: {}", .0.message)]
    UsageLimit(crate::cli::limits::UsageLimit),
    /// The turn used up its step limit without a final answer.
    #[error("the agent made {0} model calls without finishing its turn")]
    TooManySteps(u32),
    /// Writing the transcript failed.
    #[error("writing the transcript {}", path.display())]
    Transcript {
        /// The transcript file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Who does the work: runs one agent turn.
pub trait Executor: Send + Sync {
    /// A short description for status lines (`builtin · openai-chat qwen3-coder`).
    fn describe(&self) -> String;

    /// Runs one turn on `request` (from a fresh context, or continuing the last one as its
    /// [`Context`] says), reporting events to `observer`, stopping promptly with
    /// [`ExecError::Cancelled`] when `cancel` fires.
    fn run_turn<'a>(
        &'a self,
        request: TurnRequest,
        observer: &'a dyn TurnObserver,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>>;
}

/// One turn's inputs: what it is asked, who watches it, and when it must stop.
pub struct Turn<'a> {
    /// What the turn is asked to do.
    pub request: TurnRequest,
    /// Told every event as it happens.
    pub observer: &'a dyn TurnObserver,
    /// Fires when the turn must stop ([`ExecError::Cancelled`]).
    pub cancel: CancellationToken,
}

/// An executor whose turn is one `async fn`: [`Executor`] follows (the future boxed for the
/// loops, which hold executors as trait objects).
pub trait Turns: Send + Sync {
    /// What [`Executor::describe`] says.
    fn label(&self) -> String;

    /// Runs one turn, as [`Executor::run_turn`].
    fn turn(&self, turn: Turn<'_>) -> impl Future<Output = Result<TurnOutcome, ExecError>> + Send;
}

impl<T: Turns> Executor for T {
    fn describe(&self) -> String {
        self.label()
    }

    fn run_turn<'a>(
        &'a self,
        request: TurnRequest,
        observer: &'a dyn TurnObserver,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>> {
        Box::pin(self.turn(Turn {
            request,
            observer,
            cancel,
        }))
    }
}
