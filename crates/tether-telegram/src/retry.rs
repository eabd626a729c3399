//! When to try again, as this client does it: the shared backoff of `tether-retry` (0.5 s
//! doubling to a 60 s cap, equal jitter, Telegram's own retry-after on 429) with this client's
//! settings ([`RetryPolicy`]) and error type.

use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::error::TelegramError;

pub(crate) use tether_retry::Backoff;

/// How failures are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff delay; it doubles with each consecutive failure.
    pub initial: Duration,
    /// The cap on one backoff delay (the exponential part; jitter stays within it).
    pub max: Duration,
    /// Retries allowed for a request that is not the poll (a send, an edit). The poll retries
    /// without limit: a human may answer hours later, after Telegram comes back.
    pub request_retries: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(60),
            request_retries: 6,
        }
    }
}

impl From<RetryPolicy> for Backoff {
    fn from(policy: RetryPolicy) -> Self {
        Backoff::new(policy.initial, policy.max)
    }
}

impl tether_retry::RetryAfter for TelegramError {
    fn retry_after(&self) -> Option<Duration> {
        TelegramError::retry_after(self)
    }
}

impl tether_retry::Stopped for TelegramError {
    fn cancelled() -> Self {
        TelegramError::Cancelled
    }
    fn deadline_reached() -> Self {
        TelegramError::Cancelled
    }
}

/// Runs `future` unless `cancel` fires first.
pub(crate) async fn guarded<T>(
    future: impl Future<Output = Result<T, TelegramError>>,
    cancel: &CancellationToken,
) -> Result<T, TelegramError> {
    tether_retry::guarded(future, cancel, None).await
}

/// Sleeps `delay`, ending early with [`TelegramError::Cancelled`].
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
) -> Result<(), TelegramError> {
    tether_retry::pause(delay, cancel, None).await
}
