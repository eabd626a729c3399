//! One streamed HTTP model call: open, retry, decode, parse, cancel.
//!
//! The call is a small state machine polled through `futures_util::stream::unfold`, so no task
//! is spawned and dropping the stream drops the connection. Every await races the caller's
//! cancellation token. Retries happen only while nothing has been handed to the caller; after
//! that an error ends the stream, because a half-delivered answer cannot be replayed.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use super::Inner;
use crate::client::EventStream;
use crate::error::scrub;
use crate::retry::parse_retry_after;
use crate::sse::{SseDecoder, SseFrame};
use crate::wire::{self, StreamParser};
use crate::{ModelError, StreamEvent};

/// Error bodies are read up to this size; the rest is not worth holding.
const MAX_ERROR_BODY: usize = 64 * 1024;

pub(super) struct Call {
    inner: Arc<Inner>,
    body: Bytes,
    cancel: CancellationToken,
    /// Attempts made so far.
    attempts: u32,
    /// Whether any event has been handed to the caller (no retries after that).
    delivered: bool,
    response: Option<reqwest::Response>,
    decoder: SseDecoder,
    parser: Box<dyn StreamParser>,
    frames: Vec<SseFrame>,
    pending: VecDeque<StreamEvent>,
    /// An error to report once the events parsed before it have been delivered.
    failed: Option<ModelError>,
    finished: bool,
}

impl Call {
    pub(super) fn new(inner: Arc<Inner>, body: Bytes, cancel: CancellationToken) -> Self {
        let parser = wire::parser(inner.endpoint.api);
        Self {
            inner,
            body,
            cancel,
            attempts: 0,
            delivered: false,
            response: None,
            decoder: SseDecoder::new(),
            parser,
            frames: Vec::new(),
            pending: VecDeque::new(),
            failed: None,
            finished: false,
        }
    }

    pub(super) fn into_stream(self) -> EventStream {
        Box::pin(futures_util::stream::unfold(self, |mut call| async move {
            let item = call.next().await?;
            Some((item, call))
        }))
    }

    async fn next(&mut self) -> Option<Result<StreamEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.delivered = true;
                return Some(Ok(event));
            }
            if self.finished {
                return None;
            }
            let error = match self.failed.take() {
                Some(error) => error,
                None => match self.step().await {
                    Ok(()) => continue,
                    Err(error) => error,
                },
            };
            // Whatever happened, this connection is done: drop it now.
            self.response = None;
            if !self.delivered && error.is_retryable() && self.retry_allowed() {
                if let Err(cancelled) = self.wait_before_retry(&error).await {
                    return self.fail(cancelled);
                }
                continue;
            }
            return self.fail(error);
        }
    }

    fn fail(&mut self, error: ModelError) -> Option<Result<StreamEvent, ModelError>> {
        self.finished = true;
        self.response = None;
        self.pending.clear();
        Some(Err(scrub_error(error, self.key())))
    }

    fn key(&self) -> Option<&str> {
        self.inner.endpoint.api_key.as_ref().map(|key| key.expose())
    }

    fn retry_allowed(&self) -> bool {
        self.attempts < self.inner.options.retry.max_attempts.max(1)
    }

    async fn wait_before_retry(&mut self, error: &ModelError) -> Result<(), ModelError> {
        let policy = self.inner.options.retry;
        let delay = policy.delay(self.attempts, error.retry_after());
        tracing::warn!(
            attempt = self.attempts,
            max_attempts = policy.max_attempts,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            model = %self.inner.endpoint.model,
            error = %scrub_error(error.clone(), self.key()),
            "model request failed; retrying"
        );
        self.decoder = SseDecoder::new();
        self.parser = wire::parser(self.inner.endpoint.api);
        self.frames.clear();
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(ModelError::Cancelled),
            () = tokio::time::sleep(delay) => Ok(()),
        }
    }

    /// Opens the connection if needed, then reads and parses one chunk.
    async fn step(&mut self) -> Result<(), ModelError> {
        if self.cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        if self.response.is_none() {
            self.attempts += 1;
            self.response = Some(self.open().await?);
        }
        let Some(response) = self.response.as_mut() else {
            return Ok(());
        };
        let chunk = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(ModelError::Cancelled),
            chunk = response.chunk() => chunk.map_err(|err| transport(&err))?,
        };
        let ended = chunk.is_none();
        match chunk {
            Some(bytes) => self.decoder.push(&bytes, &mut self.frames),
            None => self.decoder.finish(&mut self.frames),
        }
        for frame in self.frames.drain(..) {
            match self.parser.frame(&frame, &mut self.pending) {
                Ok(false) => {}
                Ok(true) => {
                    self.finished = true;
                    self.response = None;
                    return Ok(());
                }
                Err(error) => {
                    self.failed = Some(error);
                    return Ok(());
                }
            }
        }
        if ended {
            self.response = None;
            match self.parser.end(&mut self.pending) {
                Ok(()) => self.finished = true,
                Err(error) => self.failed = Some(error),
            }
        }
        Ok(())
    }

    /// Sends the request; a non-success status becomes the matching error.
    async fn open(&self) -> Result<reqwest::Response, ModelError> {
        let request = self
            .inner
            .http
            .post(self.inner.url.clone())
            .headers(self.inner.headers.clone())
            .body(self.body.clone());
        let response = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(ModelError::Cancelled),
            response = request.send() => response.map_err(|err| transport(&err))?,
        };
        let status = response.status();
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        if status.is_success() && !is_json {
            return Ok(response);
        }
        let retry_after = parse_retry_after(response.headers());
        let body = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Err(ModelError::Cancelled),
            body = read_bounded(response) => body,
        };
        if status.is_success() {
            return Err(ModelError::MalformedStream {
                detail: format!(
                    "expected an event stream but the endpoint answered with JSON: {}",
                    scrub(&body, self.key())
                ),
            });
        }
        Err(wire::from_status(status.as_u16(), retry_after, &body))
    }
}

async fn read_bounded(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(MAX_ERROR_BODY);
    String::from_utf8_lossy(&body).into_owned()
}

fn transport(err: &reqwest::Error) -> ModelError {
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    ModelError::Transport { detail }
}

/// Removes the key from every text an error carries.
fn scrub_error(error: ModelError, key: Option<&str>) -> ModelError {
    match error {
        ModelError::ContextTooLong { message } => ModelError::ContextTooLong {
            message: scrub(&message, key),
        },
        ModelError::Auth { status, message } => ModelError::Auth {
            status,
            message: scrub(&message, key),
        },
        ModelError::Server { status, message } => ModelError::Server {
            status,
            message: scrub(&message, key),
        },
        ModelError::Transport { detail } => ModelError::Transport {
            detail: scrub(&detail, key),
        },
        ModelError::MalformedStream { detail } => ModelError::MalformedStream {
            detail: scrub(&detail, key),
        },
        ModelError::BadRequest { status, message } => ModelError::BadRequest {
            status,
            message: scrub(&message, key),
        },
        ModelError::Config { detail } => ModelError::Config {
            detail: scrub(&detail, key),
        },
        ModelError::Script { detail } => ModelError::Script {
            detail: scrub(&detail, key),
        },
        error @ (ModelError::RateLimited { .. } | ModelError::Cancelled) => error,
    }
}
