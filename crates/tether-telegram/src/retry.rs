//! When to try again: exponential backoff with jitter on 409, 5xx and transport errors, the
//! server's `retry_after` on 429, and sleeps that end early on cancellation.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::TelegramError;

/// How failures are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff delay; it doubles with each consecutive failure.
    pub initial: Duration,
    /// The cap on one delay.
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

/// The state of one retry sequence.
#[derive(Debug)]
pub(crate) struct Backoff {
    policy: RetryPolicy,
    failures: u32,
    rng: fastrand::Rng,
}

impl Backoff {
    pub(crate) fn new(policy: RetryPolicy) -> Self {
        Self {
            policy,
            failures: 0,
            rng: fastrand::Rng::new(),
        }
    }

    pub(crate) fn failures(&self) -> u32 {
        self.failures
    }

    pub(crate) fn reset(&mut self) {
        self.failures = 0;
    }

    /// 429 waits what Telegram asked plus up to one initial delay of jitter; anything else
    /// waits `initial·2^n` capped at `max`, with equal jitter.
    pub(crate) fn delay(&mut self, err: &TelegramError) -> Duration {
        self.failures = self.failures.saturating_add(1);
        if let Some(wait) = err.retry_after() {
            return wait + self.policy.initial.mul_f64(self.rng.f64());
        }
        let exponent = self.failures.saturating_sub(1).min(30);
        let full = self
            .policy
            .initial
            .saturating_mul(1u32 << exponent)
            .min(self.policy.max);
        full / 2 + (full / 2).mul_f64(self.rng.f64())
    }
}

/// Runs `future` unless `cancel` fires first.
pub(crate) async fn guarded<T>(
    future: impl Future<Output = Result<T, TelegramError>>,
    cancel: &CancellationToken,
) -> Result<T, TelegramError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(TelegramError::Cancelled),
        result = future => result,
    }
}

/// Sleeps `delay`, ending early with [`TelegramError::Cancelled`].
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
) -> Result<(), TelegramError> {
    guarded(
        async {
            tokio::time::sleep(delay).await;
            Ok(())
        },
        cancel,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_the_cap_and_honours_retry_after() {
        let policy = RetryPolicy {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(400),
            request_retries: 3,
        };
        let mut b = Backoff::new(policy);
        let server = TelegramError::Server {
            status: 502,
            detail: String::new(),
        };
        let d: Vec<_> = (0..4).map(|_| b.delay(&server)).collect();
        assert!(d[0] >= Duration::from_millis(50) && d[0] <= Duration::from_millis(100));
        assert!(d[3] >= Duration::from_millis(200) && d[3] <= Duration::from_millis(400));
        let flood = TelegramError::RateLimited {
            retry_after: Duration::from_secs(2),
        };
        let d = b.delay(&flood);
        assert!(d >= Duration::from_secs(2) && d <= Duration::from_millis(2100));
        b.reset();
        assert_eq!(b.failures(), 0);
    }
}
