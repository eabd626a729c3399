//! Several waiters on one bot (a run, `tether mcp`, a `tether ask` — here several clients, each
//! with its own lock file handle, as separate processes have): only one polls at a time (no
//! 409), it delivers every waiter's reply, and when it stops another takes over.

use tether_testkit::telegram_server::{FakeTelegramServer, Method};

use super::common::{LIMIT, LONGPOLL, Recorder, ask, client, serve, server};

const GROUP: i64 = FakeTelegramServer::GROUP;

#[tokio::test]
async fn two_waiters_share_one_poller_and_hand_over() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let first = client(&server, dir.path(), LONGPOLL);
    let second = client(&server, dir.path(), LONGPOLL);
    let a = ask(&first, "q-a", "/ws-one", "First?", &[]).await;
    let b = ask(&second, "q-b", "/ws-two", "Second?", &[]).await;
    let (one, two) = (Recorder::new(), Recorder::new());
    let (stop_one, task_one) = serve(&first, &one);
    tether_testkit::wait_until_async("the first polls", LIMIT, || {
        (server.count(Method::GetUpdates) >= 1).then_some(())
    })
    .await
    .unwrap();
    let (stop_two, task_two) = serve(&second, &two);
    // Both wait for a few long-polls: only one of them polls.
    let polls = server.count(Method::GetUpdates);
    tokio::time::sleep(LONGPOLL * 4).await;
    assert_eq!(server.conflicts(), 0, "two pollers at once");
    assert!(server.count(Method::GetUpdates) <= polls + 5);

    // The second's reply is delivered by the first, the poller.
    server.reply(&server.alice(), GROUP, b.message_id, "for two");
    let reply = one.wait("q-b", LIMIT).await;
    assert_eq!(reply.text, "for two");

    // The poller stops (its question answered elsewhere); the second takes over.
    stop_one.cancel();
    task_one.await.unwrap().unwrap();
    let c = ask(&second, "q-c", "/ws-two", "Third?", &[]).await;
    server.reply(&server.bob(), GROUP, c.message_id, "for three");
    let reply = two.wait("q-c", LIMIT).await;
    assert_eq!(reply.text, "for three");
    assert!(one.answer("q-a").is_none() && two.answer("q-a").is_none());
    assert!(
        first.registry().find(GROUP, a.message_id).is_some(),
        "q-a still waits"
    );
    stop_two.cancel();
    task_two.await.unwrap().unwrap();
}
