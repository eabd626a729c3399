//! Ending a wait without a reply: cancellation, a dropped future, a deadline — the queue is
//! always deregistered — and notes posted when another channel answered first.

use std::time::{Duration, Instant};

use tether_testkit::zulip_server::Endpoint;
use tether_zulip::{ZulipError, answered_elsewhere_note};
use tokio_util::sync::CancellationToken;

use super::common::{TOPIC, WAIT, client, server, within};

#[tokio::test]
async fn cancelling_a_wait_deregisters_the_queue() {
    let server = server(5_000).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    let asking = tokio::spawn({
        let client = client.clone();
        let cancel = cancel.clone();
        async move { client.ask(TOPIC, "q?", &cancel).await }
    });
    server
        .wait_for_count(Endpoint::GetEvents, 2, WAIT)
        .await
        .unwrap();
    let queue = server.live_queues()[0].id.clone();
    cancel.cancel();
    let err = within(asking).await.unwrap().unwrap_err();
    assert_eq!(err, ZulipError::Cancelled);
    assert_eq!(server.deleted_queues(), [queue]);
    assert!(server.live_queues().is_empty());
}

#[tokio::test]
async fn cancelling_before_the_post_posts_nothing() {
    let server = server(30).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = within(client(&server).ask(TOPIC, "q?", &cancel))
        .await
        .unwrap_err();
    assert_eq!(err, ZulipError::Cancelled);
    assert!(server.bot_messages().is_empty());
}

#[tokio::test]
async fn dropping_a_pending_reply_deregisters_its_queue() {
    let server = server(30).await;
    let pending = within(client(&server).post_question(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(server.live_queues().len(), 1);
    drop(pending);
    server
        .wait_for_count(Endpoint::DeleteQueue, 1, WAIT)
        .await
        .unwrap();
    assert!(server.live_queues().is_empty());
}

#[tokio::test]
async fn dropping_a_wait_in_progress_deregisters_its_queue() {
    let server = server(5_000).await;
    let client = client(&server);
    let asking = tokio::spawn({
        let client = client.clone();
        async move { client.ask(TOPIC, "q?", &CancellationToken::new()).await }
    });
    server
        .wait_for_count(Endpoint::GetEvents, 2, WAIT)
        .await
        .unwrap();
    asking.abort();
    server
        .wait_for_count(Endpoint::DeleteQueue, 1, WAIT)
        .await
        .unwrap();
    assert!(server.live_queues().is_empty());
}

#[tokio::test]
async fn a_deadline_ends_the_wait_and_deregisters_the_queue() {
    let server = server(5_000).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    let pending = within(client.post_question(TOPIC, "q?", &cancel))
        .await
        .unwrap();
    let started = Instant::now();
    let err = within(
        pending
            .with_deadline(started + Duration::from_millis(200))
            .wait(&cancel),
    )
    .await
    .unwrap_err();
    assert_eq!(err, ZulipError::DeadlineReached);
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the long-poll was not cut short"
    );
    assert!(server.live_queues().is_empty());
}

#[tokio::test]
async fn a_note_is_posted_in_the_topic() {
    let server = server(30).await;
    let client = client(&server);
    let note = answered_elsewhere_note("web", "Alice");
    let id = within(client.note(TOPIC, &note, &CancellationToken::new()))
        .await
        .unwrap();
    let posted = server.messages_in(TOPIC);
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].id, id.get());
    assert_eq!(posted[0].content, note);
    assert!(server.live_queues().is_empty(), "a note needs no queue");
}

#[tokio::test]
async fn an_empty_topic_is_refused() {
    let server = server(30).await;
    let err = client(&server)
        .ask("  ", "q?", &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err, ZulipError::EmptyTopic);
    assert_eq!(server.total_requests(), 0);
}
