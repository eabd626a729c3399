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
    let mut poll = Poll::new(limit);
    loop {
        if let Some(end) = poll.check(what, &mut cond) {
            return end;
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
    let mut poll = Poll::new(limit);
    loop {
        if let Some(end) = poll.check(what, &mut cond) {
            return end;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// One wait's deadline and count of checks, shared by the blocking and the async flavour.
struct Poll {
    limit: Duration,
    deadline: Instant,
    checks: usize,
}

impl Poll {
    fn new(limit: Duration) -> Self {
        Poll {
            limit,
            deadline: Instant::now() + limit,
            checks: 0,
        }
    }

    /// Checks `cond` once: its value, the timeout once the deadline has passed, or `None` to
    /// wait and check again.
    fn check<T>(
        &mut self,
        what: &str,
        cond: &mut impl FnMut() -> Option<T>,
    ) -> Option<Result<T, WaitTimeout>> {
        self.checks += 1;
        if let Some(value) = cond() {
            return Some(Ok(value));
        }
        (Instant::now() >= self.deadline).then(|| Err(timeout(what, self.limit, self.checks)))
    }
}

fn timeout(what: &str, limit: Duration, checks: usize) -> WaitTimeout {
    WaitTimeout {
        what: what.to_owned(),
        timeout: limit,
        seen: checks,
    }
}
