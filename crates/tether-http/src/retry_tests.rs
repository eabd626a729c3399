use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Backoff, RetryAfter, RetryPolicy, Retryable, Stopped, pause};

#[derive(Debug, PartialEq)]
enum Failure {
    Server,
    RateLimited(Duration),
    Refused,
    Cancelled,
    Late,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl Retryable for Failure {
    const SERVICE: &'static str = "test";

    fn is_retryable(&self) -> bool {
        matches!(self, Failure::Server | Failure::RateLimited(_))
    }
}

/// A policy retrying within milliseconds, `retries` times for a one-off request.
fn quick(retries: u32) -> RetryPolicy {
    RetryPolicy {
        initial: Duration::from_millis(1),
        max: Duration::from_millis(4),
        request_retries: retries,
    }
}

impl RetryAfter for Failure {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::RateLimited(wait) => Some(*wait),
            _ => None,
        }
    }
}

impl Stopped for Failure {
    fn cancelled() -> Self {
        Failure::Cancelled
    }
    fn deadline_reached() -> Self {
        Failure::Late
    }
}

#[test]
fn backoff_doubles_with_jitter_and_is_capped() {
    let mut backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(60));
    let mut previous_full = Duration::ZERO;
    for n in 0..20u32 {
        let delay = backoff.delay(&Failure::Server);
        let full = Duration::from_millis(500)
            .saturating_mul(1 << n.min(30))
            .min(Duration::from_secs(60));
        assert!(
            delay >= full / 2 && delay <= full,
            "#{n}: {delay:?} vs {full:?}"
        );
        assert!(full >= previous_full);
        previous_full = full;
    }
    assert_eq!(previous_full, Duration::from_secs(60));
    assert_eq!(backoff.failures(), 20);
    backoff.reset();
    assert_eq!(backoff.failures(), 0);
    assert!(backoff.delay(&Failure::Server) <= Duration::from_millis(500));
}

#[test]
fn rate_limits_wait_the_servers_retry_after_plus_jitter() {
    let mut backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(60));
    let wait = Duration::from_secs_f64(28.706_807);
    for _ in 0..50 {
        let delay = backoff.delay(&Failure::RateLimited(wait));
        assert!(delay >= wait && delay <= wait + Duration::from_millis(500));
    }
}

#[tokio::test]
async fn a_pause_ends_early_on_cancellation_or_the_deadline() {
    let cancel = CancellationToken::new();
    let soon = tokio::time::Instant::now() + Duration::from_millis(20);
    let late = pause::<Failure>(Duration::from_secs(60), &cancel, Some(soon)).await;
    assert_eq!(late, Err(Failure::Late));
    cancel.cancel();
    let stopped = pause::<Failure>(Duration::from_secs(60), &cancel, None).await;
    assert_eq!(stopped, Err(Failure::Cancelled));
    let slept = pause::<Failure>(Duration::from_millis(5), &CancellationToken::new(), None).await;
    assert_eq!(slept, Ok(()));
}

#[tokio::test]
async fn a_request_is_retried_while_it_may_pass_and_up_to_its_limit() {
    let calls = AtomicU32::new(0);
    let cancel = CancellationToken::new();
    let flaky = |n: u32| {
        let calls = &calls;
        move |api: &'static str| async move {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            if call < n {
                Err(Failure::Server)
            } else {
                Ok(api)
            }
        }
    };
    let got = quick(3).request("flaky", &"api", &cancel, flaky(3)).await;
    assert_eq!((got, calls.swap(0, Ordering::SeqCst)), (Ok("api"), 4));
    let gave_up = quick(2).request("flaky", &"api", &cancel, flaky(3)).await;
    assert_eq!(
        (gave_up, calls.swap(0, Ordering::SeqCst)),
        (Err(Failure::Server), 3)
    );
    let endless = quick(0)
        .retrying("flaky", &"api", &cancel, None, None, flaky(5))
        .await;
    assert_eq!((endless, calls.swap(0, Ordering::SeqCst)), (Ok("api"), 6));
    let refused = quick(3)
        .request("refused", &"api", &cancel, |_| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(Failure::Refused)
        })
        .await;
    assert_eq!(
        (refused, calls.swap(0, Ordering::SeqCst)),
        (Err(Failure::Refused), 1)
    );
}

#[tokio::test]
async fn retries_stop_on_cancellation_and_at_the_deadline() {
    let failing = |_| async { Err::<(), _>(Failure::Server) };
    let cancel = CancellationToken::new();
    let soon = tokio::time::Instant::now() + Duration::from_millis(30);
    let late = quick(0)
        .retrying("down", &(), &cancel, Some(soon), None, failing)
        .await;
    assert_eq!(late, Err(Failure::Late));
    cancel.cancel();
    let stopped = quick(0)
        .retrying("down", &(), &cancel, None, None, failing)
        .await;
    assert_eq!(stopped, Err(Failure::Cancelled));
}
