use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};

use super::{RetryPolicy, parse_retry_after};

fn policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 5,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(1000),
    }
}

#[test]
fn backoff_doubles_and_jitter_spans_the_upper_half() {
    let p = policy();
    assert_eq!(p.delay_with(1, None, 0.0), Duration::from_millis(50));
    let top = p.delay_with(1, None, 0.999_999);
    assert!(top > Duration::from_millis(99) && top < Duration::from_millis(100));
    assert_eq!(p.delay_with(2, None, 0.0), Duration::from_millis(100));
    assert_eq!(p.delay_with(3, None, 0.5), Duration::from_millis(300));
    assert_eq!(p.delay_with(4, None, 0.0), Duration::from_millis(400));
}

#[test]
fn backoff_is_capped_at_max_delay() {
    let p = policy();
    assert_eq!(p.delay_with(5, None, 0.0), Duration::from_millis(500));
    assert_eq!(p.delay_with(60, None, 0.0), Duration::from_millis(500));
    assert!(p.delay_with(u32::MAX, None, 0.999) < Duration::from_millis(1000));
}

#[test]
fn random_delays_stay_in_range() {
    let p = policy();
    for retry in 1..8 {
        let full = Duration::from_millis(100 * (1 << (retry - 1))).min(p.max_delay);
        for _ in 0..200 {
            let d = p.delay(retry, None);
            assert!(d >= full / 2 && d <= full, "retry {retry}: {d:?}");
        }
    }
}

#[test]
fn bad_jitter_units_are_clamped() {
    let p = policy();
    assert_eq!(p.delay_with(1, None, f64::NAN), Duration::from_millis(50));
    assert_eq!(p.delay_with(1, None, -3.0), Duration::from_millis(50));
    assert_eq!(p.delay_with(1, None, 7.0), Duration::from_millis(100));
}

#[test]
fn retry_after_replaces_backoff_and_is_capped() {
    let p = policy();
    assert_eq!(
        p.delay_with(1, Some(Duration::from_millis(250)), 0.9),
        Duration::from_millis(250)
    );
    assert_eq!(
        p.delay_with(1, Some(Duration::from_secs(3600)), 0.9),
        Duration::from_millis(1000)
    );
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_static(value));
    }
    map
}

#[test]
fn retry_after_is_parsed_as_seconds_possibly_fractional() {
    assert_eq!(
        parse_retry_after(&headers(&[("retry-after", "2")])),
        Some(Duration::from_secs(2))
    );
    assert_eq!(
        parse_retry_after(&headers(&[("retry-after", " 0.25 ")])),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        parse_retry_after(&headers(&[("retry-after-ms", "120"), ("retry-after", "9")])),
        Some(Duration::from_millis(120))
    );
}

#[test]
fn unusable_retry_after_values_are_ignored() {
    for value in [
        "-1",
        "NaN",
        "inf",
        "soon",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "1e400",
    ] {
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", value)])),
            None,
            "{value}"
        );
    }
    assert_eq!(parse_retry_after(&HeaderMap::new()), None);
}
