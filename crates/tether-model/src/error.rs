//! What can go wrong calling a model, typed by what the caller should do about it.
//!
//! The HTTP layer retries the transient kinds itself (see [`crate::RetryPolicy`]); an error that
//! reaches the caller has already been retried as far as the policy allows. No variant ever
//! holds the API key: bodies echoed by servers are scrubbed before they are stored.

use std::time::Duration;

/// A failed model call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The endpoint is rate limiting (HTTP 429). Retried by the client until the policy runs
    /// out; the caller may wait `retry_after` (when the server said) and try again later.
    #[error("rate limited by the model endpoint{}", retry_after_text(*.retry_after))]
    RateLimited {
        /// How long the server asked to wait, when it said.
        retry_after: Option<Duration>,
    },
    /// The prompt is longer than the model accepts. Never retried: shorten the conversation.
    #[error("the request is too long for the model's context: {message}")]
    ContextTooLong {
        /// The endpoint's explanation.
        message: String,
    },
    /// The key is missing, wrong or not allowed (HTTP 401/403). Never retried: fix the key.
    #[error("the model endpoint refused the credentials (HTTP {status}): {message}")]
    Auth {
        /// The HTTP status.
        status: u16,
        /// The endpoint's explanation, with the key scrubbed.
        message: String,
    },
    /// The endpoint failed (HTTP 5xx, or an overload/server error reported inside the stream).
    /// Retried before any output was delivered; the caller may retry later.
    #[error("the model endpoint failed{}: {message}", status_text(*.status))]
    Server {
        /// The HTTP status; `None` when the error arrived inside a successful stream.
        status: Option<u16>,
        /// The endpoint's explanation.
        message: String,
    },
    /// The network failed (connect, reset, timeout). Retried before any output was delivered;
    /// after output was delivered the partial answer is lost and the caller may start over.
    #[error("could not talk to the model endpoint: {detail}")]
    Transport {
        /// What failed.
        detail: String,
    },
    /// The endpoint sent a stream this client cannot understand (bad JSON, missing fields, a
    /// stream that ended early). Never retried: the endpoint is not speaking the expected API,
    /// or broke off mid-answer.
    #[error("the model endpoint sent a malformed stream: {detail}")]
    MalformedStream {
        /// What was wrong.
        detail: String,
    },
    /// The caller cancelled the call. The HTTP connection has been dropped.
    #[error("the model call was cancelled")]
    Cancelled,
    /// The endpoint rejected the request (HTTP 4xx other than 401/403/429, e.g. an unknown
    /// model or a bad parameter). Never retried: the request or configuration must change.
    #[error("the model endpoint rejected the request (HTTP {status}): {message}")]
    BadRequest {
        /// The HTTP status.
        status: u16,
        /// The endpoint's explanation, with the key scrubbed.
        message: String,
    },
    /// The endpoint description is unusable (bad URL, TLS roots unavailable). Fix the
    /// configuration.
    #[error("cannot use the model endpoint: {detail}")]
    Config {
        /// What is wrong.
        detail: String,
    },
    /// The scripted model has no answer for this request (its turns are used up). Only the
    /// in-process [`crate::scripted::ScriptedModel`] returns this; fix the script.
    #[error("scripted model: {detail}")]
    Script {
        /// What the script could not do.
        detail: String,
    },
}

impl ModelError {
    /// Whether the HTTP layer may retry this error (before any output was delivered).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. }
                | ModelError::Server { .. }
                | ModelError::Transport { .. }
        )
    }

    /// How long the server asked to wait, for rate limits.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::RateLimited { retry_after } => *retry_after,
            _ => None,
        }
    }
}

fn retry_after_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(delay) => format!(" (retry after {:.3}s)", delay.as_secs_f64()),
        None => String::new(),
    }
}

fn status_text(status: Option<u16>) -> String {
    match status {
        Some(status) => format!(" (HTTP {status})"),
        None => " mid-stream".to_owned(),
    }
}

/// Removes every occurrence of `secret` from `text` and bounds its length, so a server that
/// echoes the key (or a huge HTML error page) cannot leak it into logs or transcripts.
pub(crate) fn scrub(text: &str, secret: Option<&str>) -> String {
    const MAX_CHARS: usize = 1000;
    let mut text = match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    };
    if let Some((cut, _)) = text.char_indices().nth(MAX_CHARS) {
        text.truncate(cut);
        text.push('…');
    }
    text.trim().to_owned()
}
