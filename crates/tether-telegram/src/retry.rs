//! When to try again, as this client does it: the shared backoff and [`RetryPolicy`] of
//! `tether-http` (Telegram's own retry-after honoured) with this client's error type.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::TelegramError;

pub(crate) use tether_http::Backoff;
pub use tether_http::RetryPolicy;

impl tether_http::RetryAfter for TelegramError {
    fn retry_after(&self) -> Option<Duration> {
        TelegramError::retry_after(self)
    }
}

impl tether_http::Retryable for TelegramError {
    const SERVICE: &'static str = "telegram";

    fn is_retryable(&self) -> bool {
        TelegramError::is_retryable(self)
    }
}

impl tether_http::Stopped for TelegramError {
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
    tether_http::guarded(future, cancel, None).await
}

/// Sleeps `delay`, ending early with [`TelegramError::Cancelled`].
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
) -> Result<(), TelegramError> {
    tether_http::pause(delay, cancel, None).await
}
