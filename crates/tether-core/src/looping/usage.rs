//! Waiting out the agent's usage or rate limit.
//!
//! A limit (a subscription's five-hour window, a provider's 429) is not the agent failing:
//! counting it as a failed iteration would end a run that only needs to wait, and retrying at
//! once burns the next attempt too. So the driver waits — until the reset the agent reported,
//! plus a little slack, or with exponential backoff when it did not say — and runs the same
//! iteration again with the same prompt. The wait is a journal event (`waiting_for_usage_limit`),
//! so `tether status`, `--events jsonl` and the progress line show it; `tether cancel`,
//! `tether pause` and Ctrl+C end it promptly. Past `max_wait` in a row, or with
//! `on_usage_limit = "stop"`, the run is paused instead, for `tether resume` later.
//!
//! The runs of one process whose agents use one provider share one wait ([`SharedWait`], found
//! by [`SharedWait::for_provider`]): when one agent hits the limit, every other run's next turn
//! waits for the same reset before it starts, instead of each agent sending its own request
//! into the limit (a run of many goals, the runs a server drives).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tether_agent::cli::limits::UsageLimit;
use tether_config::{ExecutorConfig, OnUsageLimit};
use tether_store::{Event, RunState, now_ms, utc_clock};
use tokio_util::sync::CancellationToken;

use super::kind::{At, Stopped};
use super::{LoopError, watch_for_cancel};

/// How often a wait checks the store for `tether pause` (a cancel wakes it at once).
const PAUSE_POLL: Duration = Duration::from_millis(250);

/// How the loop waits out usage limits. The durations are fields so tests can make them short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageWaits {
    /// Wait, or pause the run at once.
    pub on_limit: OnUsageLimit,
    /// The longest the loop waits in a row (over every limit of one iteration) before it pauses.
    pub max_wait: Duration,
    /// The first backoff when the agent gave no reset time; it doubles with each limit in a row.
    pub first_backoff: Duration,
    /// The longest single backoff.
    pub max_backoff: Duration,
    /// The most added to a reported reset time (a tenth of the wait, up to this), so the retry
    /// does not arrive a moment too early.
    pub slack: Duration,
    /// The wait this run shares with the other runs of its provider (its own by default).
    pub shared: SharedWait,
}

/// A usage limit's reset shared by the runs of one provider: the latest reset any of them was
/// told of, and the message that told it.
#[derive(Clone, Default)]
pub struct SharedWait(Arc<Mutex<Option<(Instant, String)>>>);

/// The waits of this process, by provider.
static PROVIDERS: LazyLock<Mutex<HashMap<String, SharedWait>>> = LazyLock::new(Mutex::default);

impl SharedWait {
    /// The wait every run of this process whose agent uses `provider` shares (an executor
    /// and the endpoint or program it reaches, as the caller names it).
    pub fn for_provider(provider: &str) -> SharedWait {
        let mut all = PROVIDERS.lock().unwrap_or_else(PoisonError::into_inner);
        all.entry(provider.to_owned()).or_default().clone()
    }

    /// One run's agent hit the limit `message`, which resets after `wait`: every run sharing
    /// this waits until then too (a later reset wins).
    pub fn hit(&self, wait: Duration, message: &str) {
        let until = Instant::now() + wait;
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if held.as_ref().is_none_or(|(at, _)| *at < until) {
            *held = Some((until, message.to_owned()));
        }
    }

    /// How long a turn starting now waits for a reset another run was told of, and that run's
    /// message; `None` when there is none to wait for.
    pub fn pending(&self) -> Option<(Duration, String)> {
        let held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (until, message) = held.as_ref()?;
        let left = until.checked_duration_since(Instant::now())?;
        (!left.is_zero()).then(|| (left, message.clone()))
    }
}

impl PartialEq for SharedWait {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedWait {}

impl std::fmt::Debug for SharedWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SharedWait").field(&self.pending()).finish()
    }
}

impl Default for UsageWaits {
    fn default() -> Self {
        UsageWaits {
            on_limit: OnUsageLimit::Wait,
            max_wait: Duration::from_secs(ExecutorConfig::DEFAULT_MAX_USAGE_WAIT_SECS),
            first_backoff: Duration::from_secs(ExecutorConfig::DEFAULT_USAGE_BACKOFF_SECS),
            max_backoff: Duration::from_secs(30 * 60),
            slack: Duration::from_secs(30),
            shared: SharedWait::default(),
        }
    }
}

impl UsageWaits {
    /// The waits `[executor]` asks for.
    pub fn from_config(executor: &ExecutorConfig) -> Self {
        UsageWaits {
            on_limit: executor.on_usage_limit,
            max_wait: Duration::from_secs(executor.max_usage_wait_secs),
            first_backoff: Duration::from_secs(executor.usage_backoff_secs),
            ..UsageWaits::default()
        }
    }

    /// How long to wait for `limit`, the `attempt`-th (from 0) in a row.
    pub fn wait_for(&self, limit: &UsageLimit, attempt: u32) -> Duration {
        match limit.retry_after {
            Some(reset) => reset.saturating_add((reset / 10).min(self.slack)),
            None => self
                .first_backoff
                .saturating_mul(2_u32.saturating_pow(attempt.min(20)))
                .min(self.max_backoff),
        }
    }
}

/// Why the run pauses instead of waiting `wait` for `limit`.
pub(super) fn pause_reason(waits: &UsageWaits, limit: &UsageLimit, wait: Duration) -> String {
    let resets = utc_clock(now_ms().saturating_add(millis(wait)));
    let why = match waits.on_limit {
        OnUsageLimit::Stop => "on_usage_limit = \"stop\"".to_owned(),
        OnUsageLimit::Wait => format!(
            "waiting would take longer than max_usage_wait_secs = {}",
            waits.max_wait.as_secs()
        ),
    };
    format!(
        "stopped: the agent hit a usage limit ({}); it should reset around {resets} ({why}); \
         continue with `tether resume` then",
        limit.message
    )
}

/// Records that iteration `n` waits `wait` for `limit`, then waits: `None` once the time is
/// up, or how the run stopped meanwhile (`tether cancel`, `tether pause`, Ctrl+C).
pub(super) async fn wait_out(
    at: At<'_>,
    n: u32,
    limit: &UsageLimit,
    wait: Duration,
    interrupt: &CancellationToken,
) -> Result<Option<Stopped>, LoopError> {
    let until_ms = now_ms().saturating_add(millis(wait));
    at.deps.journal.append(
        at.run,
        &Event::WaitingForUsageLimit {
            n,
            message: limit.message.clone(),
            until_ms,
        },
    )?;
    tracing::info!(wait_secs = wait.as_secs(), message = %limit.message, "waiting out a usage limit");
    let stop = interrupt.child_token();
    let watcher = tokio::spawn(watch_for_cancel(
        at.deps.journal.clone(),
        at.run.clone(),
        stop.clone(),
    ));
    let deadline = tokio::time::Instant::now() + wait;
    let stopped = loop {
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => break None,
            () = stop.cancelled() => break Some(()),
            () = tokio::time::sleep(PAUSE_POLL) => {
                if at.deps.journal.state(at.run)?.pause_requested.is_some() {
                    break Some(());
                }
            }
        }
    };
    watcher.abort();
    if stopped.is_none() {
        return Ok(None);
    }
    let state: RunState = at.deps.journal.state(at.run)?;
    super::driver::boundary(at, &state, interrupt).await
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(retry_after: Option<Duration>) -> UsageLimit {
        UsageLimit {
            message: "limit".into(),
            retry_after,
        }
    }

    #[test]
    fn a_reported_reset_is_waited_for_with_slack() {
        let waits = UsageWaits::default();
        let wait = waits.wait_for(&limit(Some(Duration::from_secs(100))), 3);
        assert_eq!(wait, Duration::from_secs(110));
        let wait = waits.wait_for(&limit(Some(Duration::from_secs(3600))), 0);
        assert_eq!(wait, Duration::from_secs(3630));
    }

    #[test]
    fn without_a_reset_the_backoff_doubles_up_to_its_cap() {
        let waits = UsageWaits::default();
        let secs: Vec<u64> = (0..7)
            .map(|a| waits.wait_for(&limit(None), a).as_secs())
            .collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1800, 1800]);
        assert_eq!(waits.wait_for(&limit(None), u32::MAX).as_secs(), 1800);
    }

    #[test]
    fn runs_of_one_provider_share_the_latest_reset_and_other_providers_wait_for_none() {
        let a = SharedWait::for_provider("builtin http://one m");
        let again = SharedWait::for_provider("builtin http://one m");
        let other = SharedWait::for_provider("builtin http://two m");
        assert_eq!(a, again);
        assert_ne!(a, other);
        assert_eq!(a.pending(), None);
        a.hit(Duration::from_secs(60), "Rate limit reached");
        let (left, message) = again.pending().unwrap();
        assert!(left > Duration::from_secs(59) && left <= Duration::from_secs(60));
        assert_eq!(message, "Rate limit reached");
        // An earlier reset does not shorten the wait; a later one lengthens it.
        again.hit(Duration::from_secs(1), "sooner");
        assert_eq!(a.pending().unwrap().1, "Rate limit reached");
        again.hit(Duration::from_secs(120), "later");
        assert_eq!(a.pending().unwrap().1, "later");
        assert_eq!(other.pending(), None);
        // A reset that has passed is no wait.
        let past = SharedWait::default();
        past.hit(Duration::ZERO, "gone");
        assert_eq!(past.pending(), None);
    }
}
