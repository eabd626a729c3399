//! When to try again: exponential backoff with "equal jitter" on server and transport errors,
//! the server's own retry-after on a rate limit, and waits that end early on cancellation or a
//! deadline.
//!
//! One implementation, so every client backs off alike and the policy is tested once. Each
//! client keeps its own error type: the error says whether the server asked for a wait
//! ([`RetryAfter`]) and how a stopped wait reads ([`Stopped`]). The chat clients share their
//! settings too ([`RetryPolicy`]).

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// An error that may carry the server's own wait (HTTP 429's `Retry-After`, Telegram's
/// `retry_after`).
pub trait RetryAfter {
    /// How long the server asked to wait, if it did.
    fn retry_after(&self) -> Option<Duration>;
}

/// How an error type says a wait was stopped.
pub trait Stopped {
    /// The wait was cancelled.
    fn cancelled() -> Self;
    /// The deadline passed (only for callers that give one).
    fn deadline_reached() -> Self;
}

/// An error of a client that retries: whether a request may succeed if sent again, and the
/// service's name for the log.
pub trait Retryable: RetryAfter + Stopped + std::fmt::Display {
    /// The service (`zulip`), as the log names it.
    const SERVICE: &'static str;

    /// Whether the same request may succeed if sent again later (a rate limit, a server
    /// error, the network).
    fn is_retryable(&self) -> bool;
}

/// How a chat client retries: the backoff's first delay and cap, and how many retries a one-off
/// request gets (finding out who the bot is, posting the question, an edit). The wait for an
/// answer retries without limit: a human may answer hours later, after the service comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff delay; it doubles with each consecutive failure.
    pub initial: Duration,
    /// The cap on one backoff delay (the exponential part; jitter stays within it).
    pub max: Duration,
    /// Retries allowed for a one-off request.
    pub request_retries: u32,
}

impl Default for RetryPolicy {
    /// 0.5 s doubling to a 60 s cap; six retries of a one-off request.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(60),
            request_retries: 6,
        }
    }
}

impl RetryPolicy {
    /// A one-off request (`what`) on `api`: [`RetryPolicy::retrying`] with this policy's
    /// [`RetryPolicy::request_retries`] and no deadline.
    pub async fn request<A, T, E, Fut>(
        &self,
        what: &str,
        api: &A,
        cancel: &CancellationToken,
        op: impl FnMut(A) -> Fut,
    ) -> Result<T, E>
    where
        A: Clone,
        E: Retryable,
        Fut: Future<Output = Result<T, E>>,
    {
        let limit = Some(self.request_retries);
        self.retrying(what, api, cancel, None, limit, op).await
    }

    /// Runs `op` on (a clone of) `api` until it succeeds, retrying a failure that may pass —
    /// up to `limit` retries, or without end — after this policy's backoff (the server's own
    /// wait on a rate limit); stops on cancellation or at the deadline. Each retry is logged,
    /// naming the request `what`.
    pub async fn retrying<A, T, E, Fut>(
        &self,
        what: &str,
        api: &A,
        cancel: &CancellationToken,
        deadline: Option<Instant>,
        limit: Option<u32>,
        mut op: impl FnMut(A) -> Fut,
    ) -> Result<T, E>
    where
        A: Clone,
        E: Retryable,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut backoff = Backoff::from(self.clone());
        loop {
            match guarded(op(api.clone()), cancel, deadline).await {
                Ok(value) => return Ok(value),
                Err(err) if err.is_retryable() && limit.is_none_or(|l| backoff.failures() < l) => {
                    let delay = backoff.delay(&err);
                    tracing::warn!(
                        request = what,
                        error = %err,
                        ?delay,
                        "{} request failed; retrying",
                        E::SERVICE
                    );
                    pause::<E>(delay, cancel, deadline).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }
}

impl From<RetryPolicy> for Backoff {
    fn from(policy: RetryPolicy) -> Self {
        Backoff::new(policy.initial, policy.max)
    }
}

/// The state of one retry sequence.
#[derive(Debug)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    failures: u32,
    rng: fastrand::Rng,
}

impl Backoff {
    /// A sequence whose first delay is about `initial`, doubling up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max,
            failures: 0,
            rng: fastrand::Rng::new(),
        }
    }

    /// Consecutive failures so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// A success ends the sequence.
    pub fn reset(&mut self) {
        self.failures = 0;
    }

    /// The delay before the next attempt after `err`: a rate limit waits what the server asked
    /// plus up to one initial delay of jitter; anything else waits `initial·2^n` capped at
    /// `max`, with equal jitter (between half and all of it) so many clients do not retry in
    /// step.
    pub fn delay(&mut self, err: &impl RetryAfter) -> Duration {
        if let Some(wait) = err.retry_after() {
            self.failures = self.failures.saturating_add(1);
            return wait + self.initial.mul_f64(self.rng.f64());
        }
        self.exponential()
    }

    /// The next exponential delay, also for a failure that is not an error (an empty poll).
    pub fn exponential(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let exponent = self.failures.saturating_sub(1).min(30);
        let full = self.initial.saturating_mul(1u32 << exponent).min(self.max);
        full / 2 + (full / 2).mul_f64(self.rng.f64())
    }
}

/// Runs `future` unless `cancel` fires or `deadline` passes first.
pub async fn guarded<T, E: Stopped>(
    future: impl Future<Output = Result<T, E>>,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<T, E> {
    let expiry = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(E::cancelled()),
        () = expiry => Err(E::deadline_reached()),
        result = future => result,
    }
}

/// Sleeps `delay`, ending early with an error on cancellation or at the deadline.
pub async fn pause<E: Stopped>(
    delay: Duration,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> Result<(), E> {
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
