//! The one trait executors and the judge call models through.
//!
//! It is dyn-compatible (executors hold an `Arc<dyn ModelClient>`), so the streaming method is
//! a plain function returning a boxed `'static` stream rather than an `async fn`: the request is
//! serialised up front and the stream owns everything it needs.

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use crate::{ModelError, Request, Response, StopReason, StreamEvent, ToolCall, Usage};

/// The stream a [`ModelClient`] returns. After an `Err` item it ends.
pub type EventStream = BoxStream<'static, Result<StreamEvent, ModelError>>;

/// A model endpoint: HTTP ([`crate::HttpModel`]) or scripted
/// ([`crate::scripted::ScriptedModel`]).
pub trait ModelClient: Send + Sync + std::fmt::Debug {
    /// Starts one model call and streams its answer.
    ///
    /// Cancelling `cancel` ends the stream promptly with [`ModelError::Cancelled`] and drops the
    /// connection. Nothing happens until the stream is first polled.
    fn stream(&self, request: &Request, cancel: CancellationToken) -> EventStream;

    /// Makes one model call and collects the whole answer.
    fn complete(
        &self,
        request: &Request,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Response, ModelError>> {
        Box::pin(collect(self.stream(request, cancel)))
    }
}

/// Collects a stream into a [`Response`]; a stream that ends without
/// [`StreamEvent::Done`] is a [`ModelError::MalformedStream`].
pub async fn collect(mut stream: EventStream) -> Result<Response, ModelError> {
    let mut text = String::new();
    let mut tool_calls: Vec<(usize, ToolCall)> = Vec::new();
    let mut usage = Usage::default();
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(delta) => text.push_str(&delta),
            StreamEvent::ToolCallStarted { .. } | StreamEvent::ToolCallArgumentsDelta { .. } => {}
            StreamEvent::ToolCallFinished { index, call } => tool_calls.push((index, call)),
            StreamEvent::Usage(reported) => usage += reported,
            StreamEvent::Done { stop_reason } => {
                tool_calls.sort_by_key(|(index, _)| *index);
                return Ok(Response {
                    text,
                    tool_calls: tool_calls.into_iter().map(|(_, call)| call).collect(),
                    usage,
                    stop_reason,
                });
            }
        }
    }
    Err(ModelError::MalformedStream {
        detail: "the stream ended before the response was complete".to_owned(),
    })
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::EndTurn => f.write_str("end_turn"),
            StopReason::ToolUse => f.write_str("tool_use"),
            StopReason::MaxTokens => f.write_str("max_tokens"),
            StopReason::ContentFilter => f.write_str("content_filter"),
            StopReason::Other(reason) => f.write_str(reason),
        }
    }
}
