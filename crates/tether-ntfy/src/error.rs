//! What can go wrong talking to ntfy, and which of it is worth another try.

use std::time::Duration;

/// A failed ntfy request. Never carries the access token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NtfyError {
    /// HTTP 429: the server's rate limit; retried after its `Retry-After` if it gave one.
    #[error("ntfy rate limit (HTTP 429)")]
    RateLimited {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// HTTP 5xx: retried with backoff.
    #[error("ntfy server error (HTTP {status})")]
    Server {
        /// The status.
        status: u16,
        /// The server's `Retry-After`, if any.
        retry_after: Option<Duration>,
    },
    /// Any other non-success status (a wrong token is 401 or 403, a bad topic 400): not retried.
    #[error("ntfy refused the request (HTTP {status}): {message}")]
    Refused {
        /// The status.
        status: u16,
        /// ntfy's `error` text.
        message: String,
    },
    /// The server could not be reached, or the connection broke.
    #[error("cannot reach the ntfy server: {0}")]
    Transport(String),
    /// The reply is not what ntfy sends.
    #[error("unexpected reply from the ntfy server: {0}")]
    Protocol(String),
    /// The client could not be set up (TLS).
    #[error("cannot set up the ntfy client: {0}")]
    Setup(String),
    /// The caller stopped.
    #[error("stopped")]
    Cancelled,
}

impl NtfyError {
    /// Whether trying again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            NtfyError::RateLimited { .. } | NtfyError::Server { .. } | NtfyError::Transport(_)
        )
    }

    /// A transport error, without the request's URL (it names the topic) or anything else.
    pub(crate) fn transport(err: &reqwest::Error) -> Self {
        let kind = if err.is_timeout() {
            "timed out"
        } else if err.is_connect() {
            "connection failed"
        } else if err.is_body() || err.is_decode() {
            "the connection broke"
        } else {
            "request failed"
        };
        NtfyError::Transport(kind.to_owned())
    }
}

impl tether_http::RetryAfter for NtfyError {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            NtfyError::RateLimited { retry_after } | NtfyError::Server { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}

impl tether_http::Stopped for NtfyError {
    fn cancelled() -> Self {
        NtfyError::Cancelled
    }
    fn deadline_reached() -> Self {
        NtfyError::Cancelled
    }
}
