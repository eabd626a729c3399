//! Waiting for a condition with a deadline, the one way tests wait.
//!
//! Tests must be able to fail and must never sleep a fixed time hoping something happened:
//! [`wait_until`] checks a condition every few milliseconds until it yields a value or the
//! limit passes, and the error names what was awaited. [`wait_until_async`] is the same for
//! async tests whose condition is brought about by a task on the same runtime.

use std::time::{Duration, Instant};

/// How long [`wait_until`] and [`wait_until_async`] pause between two checks.
pub const POLL: Duration = Duration::from_millis(10);

/// A wait that ran out of time; says what was awaited and what was seen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("timed out after {timeout:?} waiting for {what} (seen: {seen})")]
pub struct WaitTimeout {
    /// What was awaited.
    pub what: String,
    /// How long.
    pub timeout: Duration,
    /// The count reached; for [`wait_until`], how many times the condition was checked.
    pub seen: usize,
}

/// Checks `cond` every [`POLL`] until it returns `Some`, for at most `limit`; blocks the
/// calling thread. A `bool` condition reads `|| done().then_some(())`.
///
/// ```
/// use std::time::Duration;
/// let mut n = 0;
/// let got = tether_testkit::wait_until("n to reach 3", Duration::from_secs(5), || {
///     n += 1;
///     (n >= 3).then_some(n)
/// });
/// assert_eq!(got, Ok(3));
/// ```
pub fn wait_until<T>(
    what: &str,
    limit: Duration,
    mut cond: impl FnMut() -> Option<T>,
) -> Result<T, WaitTimeout> {
    let deadline = Instant::now() + limit;
    let mut checks = 0;
    loop {
        checks += 1;
        if let Some(value) = cond() {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            return Err(timeout(what, limit, checks));
        }
        std::thread::sleep(POLL);
    }
}

/// [`wait_until`] for async tests: pauses with the runtime's timer between checks, so tasks on
/// the same runtime (the ones that make `cond` true) keep running.
pub async fn wait_until_async<T>(
    what: &str,
    limit: Duration,
    mut cond: impl FnMut() -> Option<T>,
) -> Result<T, WaitTimeout> {
    let deadline = Instant::now() + limit;
    let mut checks = 0;
    loop {
        checks += 1;
        if let Some(value) = cond() {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            return Err(timeout(what, limit, checks));
        }
        tokio::time::sleep(POLL).await;
    }
}

fn timeout(what: &str, limit: Duration, checks: usize) -> WaitTimeout {
    WaitTimeout {
        what: what.to_owned(),
        timeout: limit,
        seen: checks,
    }
}
