//! When to try again, as this client does it: the shared backoff of `tether-retry` (0.5 s
//! doubling to a 60 s cap, equal jitter, Slack's own retry-after on 429) with this client's
//! settings ([`RetryPolicy`]) and error type.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::SlackError;

pub(crate) use tether_retry::Backoff;

/// How failures are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff delay; it doubles with each consecutive failure.
    pub initial: Duration,
    /// The cap on one backoff delay (the exponential part; jitter stays within it).
    pub max: Duration,
    /// Retries allowed before the question is posted. Once posted, the wait retries without
    /// limit: a human may answer hours later, after Slack comes back.
    pub setup_retries: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(60),
            setup_retries: 6,
        }
    }
}

impl From<RetryPolicy> for Backoff {
    fn from(policy: RetryPolicy) -> Self {
        Backoff::new(policy.initial, policy.max)
    }
}

impl tether_retry::RetryAfter for SlackError {
    fn retry_after(&self) -> Option<Duration> {
        SlackError::retry_after(self)
    }
}

impl tether_retry::Stopped for SlackError {
    fn cancelled() -> Self {
        SlackError::Cancelled
    }
    fn deadline_reached() -> Self {
        SlackError::DeadlineReached
    }
}

/// Runs `future` unless `cancel` fires or `deadline` passes first.
pub(crate) async fn guarded<T>(
    future: impl Future<Output = Result<T, SlackError>>,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<T, SlackError> {
    tether_retry::guarded(future, cancel, deadline).await
}

/// Sleeps `delay`, ending early with an error on cancellation or at the deadline.
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<(), SlackError> {
    tether_retry::pause(delay, cancel, deadline).await
}
