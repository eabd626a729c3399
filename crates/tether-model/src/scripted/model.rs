//! [`ScriptedModel`]: a [`ModelClient`] that answers from a [`Script`] in-process.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{Script, Turn, resolve_tool_name};
use crate::client::{EventStream, ModelClient};
use crate::{ModelError, Request, StreamEvent, ToolCall};

/// A model that answers from a [`Script`] with no network and, by default, no latency.
///
/// Text is streamed word by word; each tool call is started, given its whole arguments in one
/// delta, and finished; tool-call ids are `call_1`, `call_2`, … per model. Usage comes from the
/// turn ([`Turn::usage_for`]).
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    script: Script,
    delay: Duration,
    next_call_id: Arc<AtomicUsize>,
}

impl ScriptedModel {
    /// A model answering from `script`.
    pub fn new(script: Script) -> Self {
        Self {
            script,
            delay: Duration::ZERO,
            next_call_id: Arc::new(AtomicUsize::new(1)),
        }
    }

    /// Waits this long before each answer (cancellable), to make a demo watchable or a
    /// cancellation testable.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// The script (a clone shares its cursor).
    pub fn script(&self) -> &Script {
        &self.script
    }

    /// The events a turn streams as.
    pub fn turn_events(&self, turn: &Turn, request: &Request) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if let Some(text) = turn.text.as_deref().filter(|text| !text.is_empty()) {
            events.extend(
                text.split_inclusive(' ')
                    .map(|word| StreamEvent::TextDelta(word.to_owned())),
            );
        }
        for (index, (name, arguments)) in turn.tool_calls.iter().enumerate() {
            let id = format!("call_{}", self.next_call_id.fetch_add(1, Ordering::Relaxed));
            let name = resolve_tool_name(name, &request.tools).to_owned();
            let call = ToolCall::new(id.clone(), name.clone(), arguments.clone());
            events.push(StreamEvent::ToolCallStarted { index, id, name });
            events.push(StreamEvent::ToolCallArgumentsDelta {
                index,
                delta: call.raw_arguments.clone(),
            });
            events.push(StreamEvent::ToolCallFinished { index, call });
        }
        events.push(StreamEvent::Usage(turn.usage_for(request)));
        events.push(StreamEvent::Done {
            stop_reason: turn.stop_reason(),
        });
        events
    }
}

impl ModelClient for ScriptedModel {
    fn stream(&self, request: &Request, cancel: CancellationToken) -> EventStream {
        let model = self.clone();
        let request = request.clone();
        let answer = async move {
            if !model.delay.is_zero() {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return vec![Err(ModelError::Cancelled)],
                    () = tokio::time::sleep(model.delay) => {}
                }
            }
            if cancel.is_cancelled() {
                return vec![Err(ModelError::Cancelled)];
            }
            match model.script.next_turn(&request) {
                Ok(turn) => model
                    .turn_events(&turn, &request)
                    .into_iter()
                    .map(Ok)
                    .collect(),
                Err(err) => vec![Err(ModelError::Script {
                    detail: err.to_string(),
                })],
            }
        };
        Box::pin(futures_util::stream::once(answer).flat_map(futures_util::stream::iter))
    }
}
