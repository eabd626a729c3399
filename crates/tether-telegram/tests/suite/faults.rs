//! Every fault of the Bot API while waiting: 429 with `retry_after`, 5xx, resets, a 409 from
//! another poller, duplicate deliveries, noise (the bot's own messages, other chats, replies to
//! other messages), a reply posted while no one polls, a store that fails for a while, a revoked
//! token — and the token never in an error.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tether_config::Secret;
use tether_telegram::{TelegramClient, TelegramError, TelegramSettings};
use tether_testkit::telegram_server::{FakeTelegramServer, Method, TelegramFault};
use tokio_util::sync::CancellationToken;

use super::common::{LIMIT, LONGPOLL, Recorder, ask, client, options, serve, server};

const GROUP: i64 = FakeTelegramServer::GROUP;

#[tokio::test]
async fn poll_faults_are_retried_and_the_reply_arrives_once() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    let post = ask(&client, "q-faults", "/ws", "Proceed?", &[]).await;
    server.fault_at(
        Method::GetUpdates,
        0,
        TelegramFault::RateLimited { retry_after: 1 },
    );
    server.fault_at(Method::GetUpdates, 1, TelegramFault::ServerError(502));
    server.fault_at(Method::GetUpdates, 2, TelegramFault::ConnectionReset);
    server.fault_at(Method::GetUpdates, 3, TelegramFault::Conflict);
    server.fault_at(Method::GetUpdates, 4, TelegramFault::DuplicateDelivery);
    server.reply(&server.alice(), GROUP, post.message_id, "go");
    let recorder = Recorder::new();
    let (stop, task) = serve(&client, &recorder);
    let reply = recorder.wait("q-faults", LIMIT).await;
    assert_eq!(reply.text, "go");
    tether_testkit::wait_until_async("confirmed", LIMIT, || {
        (server.unconfirmed() == 0).then_some(())
    })
    .await
    .unwrap();
    stop.cancel();
    task.await.unwrap().unwrap();
    assert!(server.count(Method::GetUpdates) >= 6);
    let deliveries = recorder.deliveries();
    assert!(
        deliveries
            .iter()
            .all(|(q, r)| q == "q-faults" && r.text == "go"),
        "{deliveries:?}"
    );
}

#[tokio::test]
async fn noise_is_ignored_and_a_reply_given_while_no_one_polled_is_delivered() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    let post = ask(&client, "q-noise", "/ws", "Which branch?", &[]).await;
    let alice = server.alice();
    server.post_as_bot(GROUP, Some(post.message_id), "the bot talking to itself");
    server.post(&alice, FakeTelegramServer::OTHER, None, "wrong chat");
    server.reply(
        &alice,
        FakeTelegramServer::OTHER,
        post.message_id,
        "wrong chat reply",
    );
    server.post(&alice, GROUP, None, "chatter, not a reply");
    let other = server.post(&alice, GROUP, None, "another message");
    server.reply(&server.bob(), GROUP, other, "a reply to chatter");
    server.press(&alice, GROUP, other, "tq:0:q-noise");
    server.reply(&server.bob(), GROUP, post.message_id, "main");
    let recorder = Recorder::new();
    let (stop, task) = serve(&client, &recorder);
    let reply = recorder.wait("q-noise", LIMIT).await;
    assert_eq!(
        (reply.text.as_str(), reply.responder.as_str()),
        ("main", "Bob")
    );
    tether_testkit::wait_until_async("confirmed", LIMIT, || {
        (server.unconfirmed() == 0).then_some(())
    })
    .await
    .unwrap();
    stop.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(
        recorder.deliveries().len(),
        1,
        "{:?}",
        recorder.deliveries()
    );
    assert!(
        server.presses().iter().all(|p| p.answered),
        "stray press answered"
    );
}

#[tokio::test]
async fn an_update_is_confirmed_only_after_it_is_stored() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    let post = ask(&client, "q-store", "/ws", "Retry?", &[]).await;
    let recorder = Recorder::new();
    recorder.fail.store(3, Ordering::SeqCst);
    server.reply(&server.alice(), GROUP, post.message_id, "yes");
    let (stop, task) = serve(&client, &recorder);
    let reply = recorder.wait("q-store", LIMIT).await;
    assert_eq!(reply.text, "yes");
    assert!(
        server.count(Method::GetUpdates) >= 4,
        "re-delivered after each failure"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_revoked_token_ends_the_wait_with_an_error_that_hides_it() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    server.fault_next(Method::GetUpdates, TelegramFault::Unauthorized);
    let recorder = Recorder::new();
    let (_stop, task) = serve(&client, &recorder);
    let err = tokio::time::timeout(LIMIT, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, TelegramError::Unauthorized { .. }), "{err:?}");
    assert!(!format!("{err} {err:?}").contains(server.token()));
}

#[tokio::test]
async fn a_transport_error_never_shows_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let token = "123456:SECRET-token_value";
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let settings = TelegramSettings::new(
        &format!("http://127.0.0.1:{port}"),
        Secret::new(token),
        "-1",
    )
    .unwrap();
    let mut opts = options(dir.path(), Duration::from_secs(1));
    opts.retry.request_retries = 1;
    let client = TelegramClient::new(&settings, opts).unwrap();
    let err = client
        .send("hi", None, &[], &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, TelegramError::Transport { .. }), "{err:?}");
    let shown = format!("{err} {err:?} {client:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(
        !shown.contains(&port.to_string()) || !shown.contains("bot123456"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_rate_limited_post_is_retried_and_posted_once() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    server.fault_at(
        Method::SendMessage,
        0,
        TelegramFault::RateLimited { retry_after: 0 },
    );
    server.fault_at(Method::SendMessage, 1, TelegramFault::ServerError(500));
    server.fault_at(Method::SendMessage, 2, TelegramFault::ConnectionReset);
    ask(&client, "q-post", "/ws", "Posted once?", &[]).await;
    assert_eq!(server.bot_messages(GROUP).len(), 1);
    assert_eq!(server.count(Method::SendMessage), 4);
}
