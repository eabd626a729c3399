//! The typed errors of every Slack call, each documented with what the client does about it.
//!
//! Errors are matched on Slack's `error` code (`invalid_auth`, `ratelimited`, …). No variant
//! ever carries a token: both tokens travel in an `Authorization` header marked sensitive, the
//! Socket Mode URL (which holds a one-time ticket) is never put in an error or a log line, and
//! only Slack's own error codes and transport descriptions are kept.

use std::time::Duration;

use crate::settings::ConfigError;

/// A failed Slack operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SlackError {
    /// The settings are incomplete or invalid. Fatal.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `invalid_auth`, `not_authed`, `account_inactive`, `token_revoked`, …: a token was
    /// refused. Fatal: a human must fix the token.
    #[error("Slack refused the {token} ({error})")]
    Auth {
        /// Which token: `bot token` or `app-level token`.
        token: &'static str,
        /// Slack's error code.
        error: String,
    },
    /// HTTP 429 (`ratelimited`): retried after Slack's `Retry-After`, plus jitter.
    #[error("Slack rate limit hit; retry after {retry_after:?}")]
    RateLimited {
        /// How long Slack asked to wait.
        retry_after: Duration,
    },
    /// HTTP 5xx, or `ok:false` with `internal_error`/`fatal_error`/`service_unavailable`:
    /// retried with exponential backoff.
    #[error("Slack server error (HTTP {status}): {detail}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// Slack's error code, or the start of a non-JSON body.
        detail: String,
    },
    /// The server could not be reached, the connection broke, or the socket died: retried with
    /// backoff.
    #[error("cannot reach Slack: {detail}")]
    Transport {
        /// What went wrong, without credentials or the socket's ticket.
        detail: String,
    },
    /// Any other `ok:false` (`channel_not_found`, `not_in_channel`, `invalid_arguments`, …): a
    /// configuration or client bug. Fatal.
    #[error("Slack refused {method}: {error}")]
    Rejected {
        /// The Web API method.
        method: &'static str,
        /// Slack's error code.
        error: String,
    },
    /// A success response that is not the documented shape. Fatal.
    #[error("unexpected response from Slack: {detail}")]
    BadResponse {
        /// What was wrong.
        detail: String,
    },
    /// The caller's cancellation token fired.
    #[error("cancelled while talking to Slack")]
    Cancelled,
    /// The optional deadline passed without a reply.
    #[error("no Slack reply before the deadline")]
    DeadlineReached,
}

impl SlackError {
    /// Whether the same request may succeed if sent again later (429, 5xx, transport).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            SlackError::RateLimited { .. }
                | SlackError::Server { .. }
                | SlackError::Transport { .. }
        )
    }

    /// The wait Slack asked for (429 only).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            SlackError::RateLimited { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// Whether a failed post may nevertheless have been stored by Slack (the response was lost
    /// or came from a proxy), so posting again could post twice.
    pub(crate) fn is_ambiguous(&self) -> bool {
        matches!(
            self,
            SlackError::Server { .. } | SlackError::Transport { .. }
        )
    }
}
