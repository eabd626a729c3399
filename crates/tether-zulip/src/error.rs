//! The typed errors of every Zulip call, each documented with what the client does about it.
//!
//! Errors are matched on Zulip's `code`, never on its translated `msg` (which changes
//! with the server's language). No
//! variant ever carries the API key: requests authenticate with a header that is marked
//! sensitive, and only Zulip's own `msg` and transport descriptions are kept.

use std::time::Duration;

use crate::settings::ConfigError;

/// A failed Zulip operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ZulipError {
    /// The settings are incomplete or invalid. Fatal.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// HTTP 401/403 (`INVALID_API_KEY`, `USER_DEACTIVATED`, `REALM_DEACTIVATED`): the bot's
    /// credentials were refused. Fatal.
    #[error("Zulip refused the bot's credentials (HTTP {status}, {code}): {msg}")]
    Auth {
        /// The HTTP status.
        status: u16,
        /// Zulip's error code (`none` when the body had none).
        code: String,
        /// Zulip's message.
        msg: String,
    },
    /// HTTP 400 `BAD_EVENT_QUEUE_ID`: the event queue expired or never existed. While waiting
    /// this is handled inside the client (re-register, then catch up with `GET /messages`).
    #[error("the Zulip event queue {queue_id:?} is gone (BAD_EVENT_QUEUE_ID)")]
    BadEventQueue {
        /// The queue id Zulip named.
        queue_id: String,
    },
    /// HTTP 429: retried after `retry_after` (Zulip's float `retry-after`), plus jitter.
    #[error("Zulip rate limit hit; retry after {retry_after:?}")]
    RateLimited {
        /// How long Zulip asked to wait.
        retry_after: Duration,
    },
    /// HTTP 5xx: retried with exponential backoff.
    #[error("Zulip server error (HTTP {status}): {detail}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// Zulip's message, or the start of a non-JSON body.
        detail: String,
    },
    /// The server could not be reached, or the connection broke: retried with backoff.
    #[error("cannot reach Zulip: {detail}")]
    Transport {
        /// What went wrong, without credentials.
        detail: String,
    },
    /// Any other 4xx (e.g. `STREAM_DOES_NOT_EXIST`, `BAD_REQUEST`): a configuration or client
    /// bug. Fatal.
    #[error("Zulip rejected the request (HTTP {status}, {code}): {msg}")]
    Rejected {
        /// The HTTP status.
        status: u16,
        /// Zulip's error code (`none` when the body had none).
        code: String,
        /// Zulip's message.
        msg: String,
    },
    /// A success response that is not the documented shape. Fatal.
    #[error("unexpected response from Zulip: {detail}")]
    BadResponse {
        /// What was wrong.
        detail: String,
    },
    /// The caller's cancellation token fired. The event queue was deregistered.
    #[error("cancelled while talking to Zulip")]
    Cancelled,
    /// The optional deadline passed without a reply. The event queue was deregistered.
    #[error("no Zulip reply before the deadline")]
    DeadlineReached,
    /// A topic that is empty after trimming. Fatal.
    #[error("a Zulip topic cannot be empty")]
    EmptyTopic,
}

impl ZulipError {
    /// Whether the same request may succeed if sent again later (429, 5xx, transport).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ZulipError::RateLimited { .. }
                | ZulipError::Server { .. }
                | ZulipError::Transport { .. }
        )
    }

    /// The wait Zulip asked for (429 only).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ZulipError::RateLimited { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// Whether a failed send may nevertheless have been stored by the server (the response
    /// was lost or came from a proxy), so re-sending could post twice.
    pub(crate) fn is_ambiguous(&self) -> bool {
        matches!(
            self,
            ZulipError::Server { .. } | ZulipError::Transport { .. }
        )
    }
}
