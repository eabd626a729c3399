//! When to try again: exponential backoff with jitter on 5xx and transport errors, Slack's own
//! `retry-after` on 429, and sleeps that end early on cancellation or the deadline.
//!
//! Kept apart from the request code so the policy can be tested on its own and shortened in
//! tests (a real server gets the defaults: 0.5 s doubling to a 60 s cap).

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::SlackError;

/// How failures are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff delay; it doubles with each consecutive failure.
    pub initial: Duration,
    /// The cap on one backoff delay (the exponential part; jitter stays within it).
    pub max: Duration,
    /// Retries allowed before the question is posted (`users/me`, the first register, the
    /// post itself). Once posted, the wait retries without limit: a human may answer hours
    /// later, after Slack comes back.
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

    /// Consecutive failures so far.
    pub(crate) fn failures(&self) -> u32 {
        self.failures
    }

    /// A success ends the sequence.
    pub(crate) fn reset(&mut self) {
        self.failures = 0;
    }

    /// The delay before the next attempt after `err`: 429 waits what Slack asked plus up to
    /// one initial delay of jitter; anything else waits `initial·2^n` capped at `max`, with
    /// "equal jitter" (between half and all of it) so many clients do not retry in step.
    pub(crate) fn delay(&mut self, err: &SlackError) -> Duration {
        if let Some(wait) = err.retry_after() {
            self.failures = self.failures.saturating_add(1);
            return wait + self.policy.initial.mul_f64(self.rng.f64());
        }
        self.exponential()
    }

    /// The next exponential delay, also for a failure that is not an error (an empty poll).
    pub(crate) fn exponential(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let exponent = self.failures.saturating_sub(1).min(30);
        let full = self
            .policy
            .initial
            .saturating_mul(1u32 << exponent)
            .min(self.policy.max);
        full / 2 + (full / 2).mul_f64(self.rng.f64())
    }
}

/// Runs `future` unless `cancel` fires or `deadline` passes first.
pub(crate) async fn guarded<T>(
    future: impl Future<Output = Result<T, SlackError>>,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<T, SlackError> {
    let expiry = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(SlackError::Cancelled),
        () = expiry => Err(SlackError::DeadlineReached),
        result = future => result,
    }
}

/// Sleeps `delay`, ending early with an error on cancellation or at the deadline.
pub(crate) async fn pause(
    delay: Duration,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<(), SlackError> {
    guarded(
        async {
            tokio::time::sleep(delay).await;
            Ok(())
        },
        cancel,
        deadline,
    )
    .await
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
