//! When and how long to wait before retrying a model request.
//!
//! Rate limits, server errors and network failures are usually transient, so the HTTP layer
//! retries them — but only before the caller has seen any output, because a half-delivered
//! answer cannot be taken back. Delays grow exponentially with jitter (so many clients that
//! failed together do not retry together), and a server's `retry-after` wins when it gives one,
//! capped so a misbehaving server cannot park the loop for hours.

use std::time::Duration;

use reqwest::header::HeaderMap;

/// How often and how patiently to retry a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included; `1` disables retries.
    pub max_attempts: u32,
    /// The delay before the first retry, before jitter; doubled for each further retry.
    pub base_delay: Duration,
    /// The longest delay, also the cap on a server's `retry-after`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The delay before retry number `retry` (1 for the first retry), with `unit` in `[0, 1)`
    /// choosing the jitter: the result lies in `[d/2, d)` where `d = min(base · 2^(retry-1),
    /// max)`. A `retry_after` from the server replaces the backoff, capped at `max_delay`.
    pub fn delay_with(&self, retry: u32, retry_after: Option<Duration>, unit: f64) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_delay);
        }
        let exponent = retry.saturating_sub(1).min(31);
        let full = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        let unit = if unit.is_finite() {
            unit.clamp(0.0, 1.0)
        } else {
            0.0
        };
        full / 2 + full.mul_f64(unit / 2.0)
    }

    /// [`RetryPolicy::delay_with`] with random jitter.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        self.delay_with(retry, retry_after, fastrand::f64())
    }
}

/// The server's requested wait: `retry-after-ms` (OpenAI) or `retry-after` in seconds, possibly
/// fractional. The HTTP-date form is not supported (model APIs send seconds) and yields `None`,
/// as do negative, non-finite or unparsable values.
pub fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = |name: &str, scale: f64| {
        let text = headers.get(name)?.to_str().ok()?.trim();
        let value: f64 = text.parse().ok()?;
        (value.is_finite() && value >= 0.0)
            .then(|| Duration::try_from_secs_f64(value / scale).ok())
            .flatten()
    };
    seconds("retry-after-ms", 1000.0).or_else(|| seconds("retry-after", 1.0))
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
