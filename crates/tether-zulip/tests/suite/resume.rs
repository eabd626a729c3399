//! Resuming a question posted before a crash: register, catch up, long-poll — never re-post.

use tether_testkit::zulip_server::Endpoint;
use tether_zulip::MessageId;
use tokio_util::sync::CancellationToken;

use super::common::{TOPIC, WAIT, client, server, within};

#[tokio::test]
async fn a_reply_posted_while_tether_was_down_is_found_without_re_posting() {
    let server = server(30).await;
    let cancel = CancellationToken::new();
    let question_id = {
        let before_crash = client(&server);
        let pending = within(before_crash.post_question(TOPIC, "q?", &cancel))
            .await
            .unwrap();
        pending.question_id()
        // Dropped here, as a crash would: its queue is deleted in the background.
    };
    server
        .wait_for_count(Endpoint::DeleteQueue, 1, WAIT)
        .await
        .unwrap();
    let reply_id = server.post_as_human(TOPIC, "answered while you were down");
    server.post_as_human(TOPIC, "and a second thought");

    let after_restart = client(&server);
    let reply = within(after_restart.resume(TOPIC, question_id, &cancel))
        .await
        .unwrap();
    assert_eq!(reply.text, "answered while you were down");
    assert_eq!(reply.message_id, MessageId(reply_id));
    assert_eq!(reply.question_id, question_id);
    assert_eq!(server.bot_messages().len(), 1, "never re-posted");
    assert_eq!(server.count(Endpoint::SendMessage), 1);
    assert_eq!(server.count(Endpoint::GetMessages), 1);
    assert_eq!(
        server.count(Endpoint::GetEvents),
        0,
        "the catch-up answered"
    );
    assert!(server.live_queues().is_empty());
}

#[tokio::test]
async fn with_nothing_missed_resume_long_polls_for_the_reply() {
    let server = server(30).await;
    let cancel = CancellationToken::new();
    let question_id = MessageId(server.post(&server.bot(), TOPIC, "q?"));
    let client = client(&server);
    let resuming = tokio::spawn({
        let client = client.clone();
        let cancel = cancel.clone();
        async move { client.resume(TOPIC, question_id, &cancel).await }
    });
    server
        .wait_for_count(Endpoint::GetEvents, 2, WAIT)
        .await
        .unwrap();
    server.post_as_human(TOPIC, "now");
    let reply = within(resuming).await.unwrap().unwrap();
    assert_eq!(reply.text, "now");
    assert_eq!(server.count(Endpoint::SendMessage), 0);
    // Registered before catching up, so nothing could fall between the two.
    let order: Vec<_> = server
        .requests()
        .iter()
        .filter_map(|r| r.endpoint)
        .collect();
    assert_eq!(
        &order[..3],
        [Endpoint::UsersMe, Endpoint::Register, Endpoint::GetMessages]
    );
}

#[tokio::test]
async fn replies_older_than_the_question_do_not_answer_it() {
    let server = server(30).await;
    let cancel = CancellationToken::new();
    let bot = server.bot();
    server.post(&bot, TOPIC, "first question");
    server.post_as_human(TOPIC, "answer to the first question");
    let question_id = MessageId(server.post(&bot, TOPIC, "follow-up"));
    let newer = server.post_as_human(TOPIC, "answer to the follow-up");
    let reply = within(client(&server).resume(TOPIC, question_id, &cancel))
        .await
        .unwrap();
    assert_eq!(reply.message_id, MessageId(newer));
}
