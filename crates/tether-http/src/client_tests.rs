use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

use super::*;

fn headers(value: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
    h
}

#[test]
fn retry_after_reads_seconds_and_dates_bounded() {
    assert_eq!(retry_after(&headers("2")), Some(Duration::from_secs(2)));
    assert_eq!(
        retry_after(&headers("0.05")),
        Some(Duration::from_millis(50))
    );
    assert_eq!(
        retry_after(&headers("86400")),
        Some(Duration::from_secs(600)),
        "at most ten minutes"
    );
    let soon = SystemTime::now() + Duration::from_secs(120);
    let wait = retry_after(&headers(&httpdate::fmt_http_date(soon))).unwrap();
    assert!(
        wait > Duration::from_secs(100) && wait <= Duration::from_secs(120),
        "{wait:?}"
    );
    assert_eq!(
        retry_after(&headers("Wed, 21 Oct 2015 07:28:00 GMT")),
        Some(Duration::ZERO),
        "a date past means now"
    );
    for nonsense in ["-1", "soon", "NaN", ""] {
        assert_eq!(retry_after(&headers(nonsense)), None, "{nonsense:?}");
    }
    assert_eq!(retry_after(&HeaderMap::new()), None);
}

#[tokio::test]
async fn a_transport_error_is_described_without_its_url() {
    // Nothing listens on port 9 of the loopback (the discard service is not run here).
    let secret = "bot123456:SECRET-TOKEN";
    let http = client(&ClientSpec::new(
        "test",
        "http://127.0.0.1:9",
        Duration::from_secs(5),
    ))
    .unwrap();
    let err = http
        .get(format!("http://127.0.0.1:9/{secret}/getMe"))
        .send()
        .await
        .unwrap_err();
    let text = describe(&err);
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("error sending request"), "{text}");
}

#[test]
fn a_client_is_built_for_plain_http_and_for_tls() {
    for url in ["http://127.0.0.1:1", "https://example.com"] {
        let spec =
            ClientSpec::new("test", url, Duration::from_secs(1)).timeout(Duration::from_secs(2));
        assert_eq!(spec.https, url.starts_with("https"));
        client(&spec).unwrap();
    }
}

#[test]
fn the_requested_wait_is_the_bodys_else_the_headers_else_a_second() {
    let none = retry_after(&HeaderMap::new());
    assert_eq!(
        requested_wait(Some(0.25), retry_after(&headers("9"))),
        Duration::from_millis(250)
    );
    assert_eq!(
        requested_wait(None, retry_after(&headers("2"))),
        Duration::from_secs(2)
    );
    assert_eq!(requested_wait(Some(f64::NAN), none), Duration::from_secs(1));
    assert_eq!(requested_wait(None, none), Duration::from_secs(1));
    assert_eq!(requested_wait(Some(1e9), none), Duration::from_secs(600));
    assert_eq!(requested_wait(Some(-3.0), none), Duration::ZERO);
}

#[test]
fn a_snippet_is_one_short_line() {
    let page = format!("<html>\n  <body>{}</body>", "x".repeat(500));
    let cut = snippet(page.as_bytes());
    assert!(
        cut.starts_with("<html> <body>xxx") && cut.chars().count() == 120,
        "{cut}"
    );
    assert_eq!(snippet(b" \n"), "(empty body)");
}

#[test]
fn a_base_url_is_http_with_a_host_and_nothing_after_its_path() {
    assert_eq!(
        base_url(" https://chat.example.com/zulip// "),
        Ok("https://chat.example.com/zulip".into())
    );
    for (url, why) in [
        ("chat.example.com", "relative URL without a base"),
        ("ftp://chat.example.com", "the scheme must be http or https"),
        ("http://h/?q=1", "a base URL has no query or fragment"),
        ("http://h/#top", "a base URL has no query or fragment"),
    ] {
        assert_eq!(base_url(url), Err(why.to_owned()), "{url}");
    }
}
