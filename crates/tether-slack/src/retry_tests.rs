use std::time::Duration;

use super::{Backoff, RetryPolicy};
use crate::error::SlackError;

fn server_error() -> SlackError {
    SlackError::Server {
        status: 502,
        detail: "bad gateway".into(),
    }
}

#[test]
fn backoff_doubles_with_jitter_and_is_capped_at_sixty_seconds() {
    let mut backoff = Backoff::new(RetryPolicy::default());
    let mut previous_full = Duration::ZERO;
    for n in 0..20u32 {
        let delay = backoff.delay(&server_error());
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
    backoff.reset();
    assert!(backoff.delay(&server_error()) <= Duration::from_millis(500));
}

#[test]
fn rate_limits_wait_the_float_retry_after_plus_jitter() {
    let mut backoff = Backoff::new(RetryPolicy::default());
    let err = SlackError::RateLimited {
        retry_after: Duration::from_secs_f64(28.706_807),
    };
    for _ in 0..50 {
        let delay = backoff.delay(&err);
        assert!(delay >= Duration::from_secs_f64(28.706_807));
        assert!(delay <= Duration::from_secs_f64(29.206_807));
    }
}
