//! Publishing: the JSON body ntfy documents, the token as a header, retries on 429 and 5xx.

use std::time::{Duration, Instant};

use tether_config::Secret;
use tether_ntfy::{Action, NtfyClient, NtfyError, Publish, RetryPolicy};
use tether_testkit::{FakeNtfyServer, NtfyFault, NtfyRoute};
use tokio_util::sync::CancellationToken;

fn fast() -> RetryPolicy {
    RetryPolicy {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(50),
        retries: 3,
    }
}

fn question() -> Publish {
    Publish {
        topic: "tether-t".into(),
        title: Some("Question".into()),
        message: "Ship it?".into(),
        priority: Some(4),
        tags: vec!["question".into()],
        actions: vec![Action::http_post(
            "yes",
            "http://127.0.0.1:1/tether-t-reply",
            "{\"i\":0}".into(),
        )],
    }
}

#[tokio::test]
async fn a_publish_carries_the_documented_fields_and_the_token() {
    let server = FakeNtfyServer::builder()
        .token("tk_123")
        .start()
        .await
        .unwrap();
    let client = NtfyClient::new(&server.url(), Some(Secret::new("tk_123"))).unwrap();
    let sent = client
        .publish(&question(), &CancellationToken::new())
        .await
        .unwrap();
    let stored = server.messages("tether-t");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["id"], sent.id.as_str());
    assert_eq!(stored[0]["title"], "Question");
    assert_eq!(stored[0]["message"], "Ship it?");
    assert_eq!(stored[0]["priority"], 4);
    assert_eq!(stored[0]["actions"][0]["action"], "http");
    assert_eq!(stored[0]["actions"][0]["method"], "POST");
    assert_eq!(stored[0]["actions"][0]["body"], "{\"i\":0}");
    assert_eq!(server.authorizations(), [Some("Bearer tk_123".to_owned())]);
}

#[tokio::test]
async fn a_wrong_token_is_refused_without_the_token_in_the_error() {
    let server = FakeNtfyServer::builder()
        .token("right")
        .start()
        .await
        .unwrap();
    let client = NtfyClient::new(&server.url(), Some(Secret::new("wrong-tk-999"))).unwrap();
    let err = client
        .publish(&question(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, NtfyError::Refused { status: 403, .. }),
        "{err:?}"
    );
    let shown = format!("{err} {err:?} {client:?}");
    assert!(!shown.contains("wrong-tk-999"), "{shown}");
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_as_the_server_asks() {
    let server = FakeNtfyServer::start().await.unwrap();
    server.fail_next(
        NtfyRoute::Publish,
        NtfyFault::RateLimited { retry_after: 1 },
    );
    server.fail_next(NtfyRoute::Publish, NtfyFault::ServerError(503));
    let client = NtfyClient::new(&server.url(), None)
        .unwrap()
        .with_retry(fast());
    let started = Instant::now();
    client
        .publish(&question(), &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honoured"
    );
    assert_eq!(server.rate_limited(), 1);
    assert_eq!(server.messages("tether-t").len(), 1, "published once");
}

#[tokio::test]
async fn retries_end_after_the_policys_count() {
    let server = FakeNtfyServer::start().await.unwrap();
    for _ in 0..4 {
        server.fail_next(NtfyRoute::Publish, NtfyFault::ServerError(502));
    }
    let client = NtfyClient::new(&server.url(), None)
        .unwrap()
        .with_retry(fast());
    let err = client
        .publish(&question(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, NtfyError::Server { status: 502, .. }),
        "{err:?}"
    );
    assert!(server.messages("tether-t").is_empty());
}
