//! The typed errors of every Bot API call, each saying what the client does about it.
//!
//! The token is part of every request's URL, so no variant ever holds a URL: transport errors
//! are described with reqwest's URL stripped, and the token is redacted from any text kept.

use std::time::Duration;

use crate::settings::ConfigError;

/// A failed Telegram operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TelegramError {
    /// The settings are incomplete or invalid. Fatal.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// HTTP 401/404 on a method: the token was refused. Fatal.
    #[error("Telegram refused the bot token (HTTP {status}): {description}")]
    Unauthorized {
        /// The HTTP status.
        status: u16,
        /// Telegram's description.
        description: String,
    },
    /// HTTP 409: another process polls this bot (or a webhook is set). Retried with backoff.
    #[error("Telegram conflict: {description}")]
    Conflict {
        /// Telegram's description.
        description: String,
    },
    /// HTTP 429: retried after `retry_after` (`parameters.retry_after`).
    #[error("Telegram flood control; retry after {retry_after:?}")]
    RateLimited {
        /// How long Telegram asked to wait.
        retry_after: Duration,
    },
    /// HTTP 5xx: retried with backoff.
    #[error("Telegram server error (HTTP {status}): {detail}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The description, or the start of a non-JSON body.
        detail: String,
    },
    /// The server could not be reached or the connection broke. Retried with backoff.
    #[error("cannot reach Telegram: {detail}")]
    Transport {
        /// What went wrong, without the URL (it holds the token).
        detail: String,
    },
    /// Any other 4xx (`chat not found`, `bot was blocked`, …). Fatal for that request.
    #[error("Telegram rejected {method} (HTTP {status}): {description}")]
    Rejected {
        /// The method called.
        method: &'static str,
        /// The HTTP status.
        status: u16,
        /// Telegram's description.
        description: String,
    },
    /// A success response that is not the documented shape. Fatal.
    #[error("unexpected response from Telegram: {detail}")]
    BadResponse {
        /// What was wrong.
        detail: String,
    },
    /// The caller's cancellation token fired.
    #[error("cancelled while talking to Telegram")]
    Cancelled,
}

impl TelegramError {
    /// Whether the same request may succeed later (409, 429, 5xx, transport).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            TelegramError::Conflict { .. }
                | TelegramError::RateLimited { .. }
                | TelegramError::Server { .. }
                | TelegramError::Transport { .. }
        )
    }

    /// The wait Telegram asked for (429 only).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            TelegramError::RateLimited { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// Whether a failed send may nevertheless have been delivered (a lost response).
    pub fn is_ambiguous(&self) -> bool {
        matches!(
            self,
            TelegramError::Server { .. } | TelegramError::Transport { .. }
        )
    }

    /// "message is not modified" on an edit: the edit was already done.
    pub(crate) fn is_not_modified(&self) -> bool {
        matches!(self, TelegramError::Rejected { description, .. } if description.contains("not modified"))
    }
}
