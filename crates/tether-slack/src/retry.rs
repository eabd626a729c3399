//! When to try again, as this client does it: the shared backoff and [`RetryPolicy`] of
//! `tether-http` (Slack's own retry-after honoured) with this client's error type.

use std::time::Duration;
use tokio::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::error::SlackError;

pub(crate) use tether_http::Backoff;
pub use tether_http::RetryPolicy;

impl tether_http::RetryAfter for SlackError {
    fn retry_after(&self) -> Option<Duration> {
        SlackError::retry_after(self)
    }
}

impl tether_http::Retryable for SlackError {
    const SERVICE: &'static str = "slack";

    fn is_retryable(&self) -> bool {
        SlackError::is_retryable(self)
    }
}

impl tether_http::Stopped for SlackError {
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
    tether_http::guarded(future, cancel, deadline).await
}

/// Sleeps `delay`, ending early with an error on cancellation or at the deadline.
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<(), SlackError> {
    tether_http::pause(delay, cancel, deadline).await
}
