use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Backoff, RetryAfter, Stopped, pause};

#[derive(Debug, PartialEq)]
enum Failure {
    Server,
    RateLimited(Duration),
    Cancelled,
    Late,
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
