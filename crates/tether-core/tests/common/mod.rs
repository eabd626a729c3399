//! What the loop tests share: a scripted executor. Each turn records its prompt, takes the next
//! [`Step`] (or the script's fallback once the steps run out), does what the step does to the
//! workspace, reports its tool calls to the loop, and ends as the step says.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tether_agent::cli::limits::UsageLimit;
use tether_agent::{
    AgentEvent, Context, ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What a scripted turn does to the workspace before it answers.
pub type Act = Box<dyn FnOnce(&Path) + Send>;

/// One scripted turn.
pub enum Step {
    /// Writes `notes-<n>.md` (one tool call) and says this.
    Say(&'static str),
    /// Writes `notes-<n>.md`, then fails as the model would.
    Fail(&'static str),
    /// Writes `notes-<n>.md`, signals the notify, then blocks until cancelled.
    Hang(Arc<Notify>),
    /// Acts on the workspace root with one `edit` call, and says "worked".
    Work(Act),
    /// Makes no tool call and says "thinking".
    Idle,
    /// Hits a usage limit (with this reset time, if any) before doing anything.
    Limit(Option<std::time::Duration>),
    /// Writes `notes-<n>.md`, reports these input and output tokens and cost, and says "spent".
    Spend(u64, u64, Option<f64>),
    /// Writes `notes-<n>.md`, reports these tokens (cache reads and writes apart) and no cost,
    /// and says "spent".
    Cached(tether_config::TokenCounts),
    /// Reports that it started from a fresh context for this reason, then does as `Say`.
    Fresh(&'static str, &'static str),
}

/// A `Step::Work` doing `act`.
pub fn work(act: impl FnOnce(&Path) + Send + 'static) -> Step {
    Step::Work(Box::new(act))
}

/// An executor playing a list of steps; `rest` is played once they run out.
pub struct Scripted {
    /// The steps still to play; a test may add more between runs.
    pub steps: Mutex<VecDeque<Step>>,
    rest: fn() -> Step,
    /// Every prompt received, in order.
    pub prompts: Mutex<Vec<String>>,
    /// What every turn was asked to start from, in order.
    pub contexts: Mutex<Vec<Context>>,
}

impl Scripted {
    /// Plays `steps`, then says "nothing left to do" on every later turn.
    pub fn new(steps: Vec<Step>) -> Arc<Self> {
        Self::then(steps, || Step::Say("nothing left to do"))
    }

    /// Plays `steps`, then `rest()` on every later turn.
    pub fn then(steps: Vec<Step>, rest: fn() -> Step) -> Arc<Self> {
        Arc::new(Scripted {
            steps: Mutex::new(steps.into()),
            rest,
            prompts: Mutex::new(Vec::new()),
            contexts: Mutex::new(Vec::new()),
        })
    }

    /// The prompt of turn `n` (1-based).
    pub fn prompt(&self, n: usize) -> String {
        self.prompts.lock().unwrap()[n - 1].clone()
    }
}

/// How a turn ends, once its step has acted.
enum End {
    Say(&'static str),
    Spent(u64, u64, Option<f64>),
    Cached(tether_config::TokenCounts),
    Fail(&'static str),
    Hang(Arc<Notify>),
    Limit(Option<std::time::Duration>),
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Boom(String);

impl Executor for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }
    fn run_turn<'a>(
        &'a self,
        request: TurnRequest,
        observer: &'a dyn TurnObserver,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>> {
        Box::pin(async move {
            self.prompts.lock().unwrap().push(request.prompt);
            self.contexts.lock().unwrap().push(request.context);
            let next = self.steps.lock().unwrap().pop_front();
            let notes = || ("write", format!("write notes-{}.md", request.iteration));
            // What the turn does first, the tool call it reports, and how it ends.
            let (call, end) = match next.unwrap_or_else(self.rest) {
                Step::Work(act) => {
                    act(request.transcript.ancestors().nth(4).unwrap());
                    (Some(("edit", "edit".to_owned())), End::Say("worked"))
                }
                Step::Idle => (None, End::Say("thinking")),
                Step::Say(text) => (Some(notes()), End::Say(text)),
                Step::Fail(e) => (Some(notes()), End::Fail(e)),
                Step::Hang(started) => (Some(notes()), End::Hang(started)),
                Step::Limit(reset) => (None, End::Limit(reset)),
                Step::Spend(i, o, cost) => (Some(notes()), End::Spent(i, o, cost)),
                Step::Cached(tokens) => (Some(notes()), End::Cached(tokens)),
                Step::Fresh(reason, text) => {
                    let reason = reason.to_owned();
                    observer.event(AgentEvent::FreshContext { reason });
                    (Some(notes()), End::Say(text))
                }
            };
            let tool_calls = u32::from(call.is_some());
            if let Some((tool, summary)) = call {
                observer.event(AgentEvent::ToolCall {
                    tool: tool.into(),
                    summary,
                    is_error: false,
                });
            }
            match end {
                End::Limit(retry_after) => Err(ExecError::UsageLimit(UsageLimit {
                    message: "You've hit your usage limit".into(),
                    retry_after,
                })),
                End::Fail(e) => Err(ExecError::Model(Box::new(Boom(e.into())))),
                End::Hang(started) => {
                    started.notify_one();
                    cancel.cancelled().await;
                    Err(ExecError::Cancelled)
                }
                End::Spent(input_tokens, output_tokens, cost_usd) => Ok(TurnOutcome {
                    final_message: "spent".into(),
                    tool_calls,
                    input_tokens,
                    output_tokens,
                    cost_usd,
                    ..TurnOutcome::default()
                }),
                End::Cached(tokens) => Ok(TurnOutcome {
                    final_message: "spent".into(),
                    tool_calls,
                    input_tokens: tokens.input,
                    cached_input_tokens: tokens.cache_read,
                    cache_write_input_tokens: tokens.cache_write,
                    output_tokens: tokens.output,
                    cost_usd: None,
                }),
                End::Say(text) => Ok(TurnOutcome {
                    final_message: text.into(),
                    tool_calls,
                    ..TurnOutcome::default()
                }),
            }
        })
    }
}
