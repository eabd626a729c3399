//! Following a reply topic: messages in order, `open`/`keepalive` skipped, a dropped stream
//! resumed with `since=<last id>` (nothing lost), duplicates skipped (nothing doubled), 429
//! backed off.

use std::time::Duration;

use tether_ntfy::{FollowOptions, Follower, NtfyClient};
use tether_testkit::{FakeNtfyServer, NtfyFault, NtfyRoute};
use tokio_util::sync::CancellationToken;

const LIMIT: Duration = Duration::from_secs(10);

fn options() -> FollowOptions {
    FollowOptions {
        idle_timeout: Duration::from_secs(5),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(100),
    }
}

async fn next_text(f: &mut Follower) -> String {
    let m = tokio::time::timeout(LIMIT, f.next(&CancellationToken::new()))
        .await
        .expect("a message in time")
        .unwrap();
    m.message.unwrap_or_default()
}

#[tokio::test]
async fn messages_come_in_order_and_keepalives_are_skipped() {
    let server = FakeNtfyServer::builder()
        .keepalive(Duration::from_millis(20))
        .start()
        .await
        .unwrap();
    let early = server.publish("r", "before");
    let client = NtfyClient::new(&server.url(), None).unwrap();
    let mut f = Follower::new(client, "r", early["id"].as_str().unwrap(), options());
    let reader = tokio::spawn(async move {
        let a = next_text(&mut f).await;
        let b = next_text(&mut f).await;
        (a, b, f)
    });
    server
        .wait_for("a stream", LIMIT, |s| s.open_streams() == 1)
        .await
        .unwrap();
    server
        .wait_for("keepalives", LIMIT, |s| s.keepalives() >= 2)
        .await
        .unwrap();
    server.publish("r", "one");
    server.publish("r", "two");
    let (a, b, f) = reader.await.unwrap();
    assert_eq!(
        (a.as_str(), b.as_str()),
        ("one", "two"),
        "`before` is not after since"
    );
    assert_eq!(f.connects(), 1);
}

#[tokio::test]
async fn a_dropped_stream_resumes_since_the_last_id_and_loses_nothing() {
    let server = FakeNtfyServer::start().await.unwrap();
    let client = NtfyClient::new(&server.url(), None).unwrap();
    let mut f = Follower::new(client, "r", "all", options());
    server.publish("r", "first");
    assert_eq!(next_text(&mut f).await, "first");
    let last = f.last_id().unwrap().to_owned();

    server.hold_subscriptions();
    server.drop_streams();
    let pending = tokio::spawn(async move {
        let got = next_text(&mut f).await;
        (got, f)
    });
    server
        .wait_for("the reconnect to be held", LIMIT, |s| {
            s.held_subscriptions() == 1
        })
        .await
        .unwrap();
    server.publish("r", "while away");
    server.release_subscriptions();
    let (got, mut f) = pending.await.unwrap();
    assert_eq!(got, "while away");
    let subs = server.subscriptions();
    assert_eq!(subs.last().unwrap().since.as_deref(), Some(last.as_str()));

    // Nothing doubled: only what comes next.
    server.publish("r", "after");
    assert_eq!(next_text(&mut f).await, "after");
}

#[tokio::test]
async fn a_duplicate_message_id_is_handed_out_once() {
    let server = FakeNtfyServer::start().await.unwrap();
    let client = NtfyClient::new(&server.url(), None).unwrap();
    let mut f = Follower::new(client, "r", "all", options());
    let first = server.publish("r", "once");
    assert_eq!(next_text(&mut f).await, "once");
    assert!(server.resend(first["id"].as_str().unwrap()));
    server.publish("r", "next");
    assert_eq!(next_text(&mut f).await, "next", "the duplicate was skipped");
}

#[tokio::test]
async fn a_rate_limited_subscription_is_backed_off_and_retried() {
    let server = FakeNtfyServer::start().await.unwrap();
    server.fail_next(
        NtfyRoute::Subscribe,
        NtfyFault::RateLimited { retry_after: 0 },
    );
    server.fail_next(NtfyRoute::Subscribe, NtfyFault::ServerError(500));
    server.publish("r", "queued");
    let client = NtfyClient::new(&server.url(), None).unwrap();
    let mut f = Follower::new(client, "r", "all", options());
    assert_eq!(next_text(&mut f).await, "queued");
    assert_eq!(server.rate_limited(), 1);
    assert_eq!(server.subscriptions().len(), 3);
    assert_eq!(f.connects(), 1);
}

#[tokio::test]
async fn cancelling_stops_the_wait() {
    let server = FakeNtfyServer::start().await.unwrap();
    let client = NtfyClient::new(&server.url(), None).unwrap();
    let mut f = Follower::new(client, "r", "all", options());
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let waiting = tokio::spawn(async move { f.next(&c).await });
    server
        .wait_for("a stream", LIMIT, |s| s.open_streams() == 1)
        .await
        .unwrap();
    cancel.cancel();
    let got = tokio::time::timeout(LIMIT, waiting).await.unwrap().unwrap();
    assert!(got.is_err());
}
