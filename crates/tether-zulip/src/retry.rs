//! When to try again, as this client does it: the shared backoff and [`RetryPolicy`] of
//! `tether-http` (Zulip's own retry-after honoured) with this client's error type.

use std::time::Duration;
use tokio::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::error::ZulipError;

pub(crate) use tether_http::Backoff;
pub use tether_http::RetryPolicy;

impl tether_http::RetryAfter for ZulipError {
    fn retry_after(&self) -> Option<Duration> {
        ZulipError::retry_after(self)
    }
}

impl tether_http::Retryable for ZulipError {
    const SERVICE: &'static str = "zulip";

    fn is_retryable(&self) -> bool {
        ZulipError::is_retryable(self)
    }
}

impl tether_http::Stopped for ZulipError {
    fn cancelled() -> Self {
        ZulipError::Cancelled
    }
    fn deadline_reached() -> Self {
        ZulipError::DeadlineReached
    }
}

/// Runs `future` unless `cancel` fires or `deadline` passes first.
pub(crate) async fn guarded<T>(
    future: impl Future<Output = Result<T, ZulipError>>,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<T, ZulipError> {
    tether_http::guarded(future, cancel, deadline).await
}

/// Sleeps `delay`, ending early with an error on cancellation or at the deadline.
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<(), ZulipError> {
    tether_http::pause(delay, cancel, deadline).await
}
