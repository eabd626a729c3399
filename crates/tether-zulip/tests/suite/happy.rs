//! The happy path and the ordinary oddities of a live topic: echoes, loose narrows, duplicates.

use serde_json::{Value, json};
use tether_testkit::zulip_server::{Action, Endpoint, Moment, TopicMatch, ZulipFault};
use tether_zulip::{MessageId, QuestionMessage};
use tokio_util::sync::CancellationToken;

use super::common::{TOPIC, WAIT, client, server, within};

fn question() -> String {
    QuestionMessage {
        question: "Change the test or the code?",
        context: "the test expects DecimalError",
        confidence: 25,
        options: &[],
    }
    .render()
}

#[tokio::test]
async fn registers_before_posting_then_returns_the_first_human_reply() {
    let server = server(50).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    let asking = tokio::spawn({
        let client = client.clone();
        let cancel = cancel.clone();
        async move { client.ask(TOPIC, &question(), &cancel).await }
    });
    server
        .wait_for_count(Endpoint::GetEvents, 1, WAIT)
        .await
        .unwrap();
    let reply_id = server.post_as_human(TOPIC, "Change the code.");
    let reply = within(asking).await.unwrap().unwrap();

    assert_eq!(reply.text, "Change the code.");
    assert_eq!(reply.sender_full_name, "Alice Human");
    assert_eq!(reply.sender_email, "alice@example.com");
    assert_eq!(reply.message_id, MessageId(reply_id));
    assert_eq!(reply.topic, TOPIC);
    let posted = server.bot_messages();
    assert_eq!(posted.len(), 1);
    assert_eq!(reply.question_id, MessageId(posted[0].id));
    assert_eq!(posted[0].topic, TOPIC);
    assert_eq!(posted[0].content, question());

    // The queue exists before the question is posted, and is gone once answered.
    let order: Vec<_> = server
        .requests()
        .iter()
        .filter_map(|r| r.endpoint)
        .collect();
    assert_eq!(
        &order[..3],
        [Endpoint::UsersMe, Endpoint::Register, Endpoint::SendMessage]
    );
    assert_eq!(order.last(), Some(&Endpoint::DeleteQueue));
    assert!(server.live_queues().is_empty());
    assert_eq!(server.deleted_queues().len(), 1);
}

#[tokio::test]
async fn requests_are_form_encoded_with_json_in_fields_as_the_reference_says() {
    let server = server(20).await;
    let client = client(&server);
    server.on(
        Endpoint::SendMessage,
        0,
        Moment::AfterHandling,
        server.human_reply(TOPIC, "ok"),
    );
    within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    let requests = server.requests();
    let find = |e: Endpoint| requests.iter().find(|r| r.endpoint == Some(e)).unwrap();

    let register = find(Endpoint::Register);
    assert_eq!(
        register.content_type.as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    let narrow: Value = serde_json::from_str(register.param("narrow").unwrap()).unwrap();
    assert_eq!(narrow, json!([["stream", "tether"], ["topic", TOPIC]]));
    let types: Value = serde_json::from_str(register.param("event_types").unwrap()).unwrap();
    assert_eq!(types, json!(["message"]));

    let send = find(Endpoint::SendMessage);
    assert_eq!(send.param("type"), Some("stream"));
    assert_eq!(send.param("to"), Some("tether"));
    assert_eq!(send.param("topic"), Some(TOPIC));
    assert_eq!(send.param("content"), Some("q?"));

    let poll = find(Endpoint::GetEvents);
    assert!(poll.param("queue_id").is_some());
    assert_eq!(poll.param("last_event_id"), Some("-1"));

    let delete = find(Endpoint::DeleteQueue);
    assert_eq!(delete.param("queue_id"), poll.param("queue_id"));
    assert!(requests.iter().all(|r| r.authorized));
}

#[tokio::test]
async fn the_posted_id_is_known_before_waiting() {
    let server = server(50).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    let pending = within(client.post_question(TOPIC, "q?", &cancel))
        .await
        .unwrap();
    assert_eq!(
        pending.question_id(),
        MessageId(server.bot_messages()[0].id)
    );
    assert_eq!(pending.topic(), TOPIC);
    assert_eq!(
        server.count(Endpoint::GetEvents),
        0,
        "no poll before wait()"
    );
    server.post_as_human(TOPIC, "yes");
    let reply = within(pending.wait(&cancel)).await.unwrap();
    assert_eq!(reply.text, "yes");
}

#[tokio::test]
async fn waiting_costs_one_request_per_long_poll_timeout() {
    let server = server(30).await;
    let client = client(&server);
    // The human answers as the 11th poll arrives. The first poll returns the question's own
    // echo at once; the nine after it each waited a full timeout for a heartbeat.
    server.on(
        Endpoint::GetEvents,
        10,
        Moment::OnArrival,
        server.human_reply(TOPIC, "finally"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "finally");
    assert_eq!(server.count(Endpoint::GetEvents), 11);
    assert_eq!(server.count(Endpoint::Register), 1);
    assert_eq!(server.count(Endpoint::GetMessages), 0);
    // users/me, register, post, 11 polls, delete.
    assert_eq!(server.total_requests(), 15);
    let polls: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.endpoint == Some(Endpoint::GetEvents))
        .collect();
    let waited = polls[10].at - polls[1].at;
    assert!(
        waited >= server.longpoll_timeout() * 9,
        "nine polls took {waited:?}: not long-polling"
    );
    // Heartbeats were acknowledged: the event id moves on.
    let acked: Vec<i64> = polls
        .iter()
        .map(|p| p.param("last_event_id").unwrap().parse().unwrap())
        .collect();
    assert_eq!(acked, (-1..10).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_reply_between_the_post_and_the_first_poll_is_not_missed() {
    let server = server(50).await;
    let client = client(&server);
    server.on(
        Endpoint::SendMessage,
        0,
        Moment::AfterHandling,
        server.human_reply(TOPIC, "quick"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "quick");
    assert_eq!(server.count(Endpoint::GetEvents), 1);
    assert_eq!(server.count(Endpoint::GetMessages), 0);
}

#[tokio::test]
async fn the_bots_own_messages_are_ignored() {
    let server = server(30).await;
    let client = client(&server);
    let bot = server.bot();
    // Besides the question's own echo, another bot message lands in the topic first.
    server.on(
        Endpoint::GetEvents,
        0,
        Moment::OnArrival,
        Action::Post {
            sender: bot,
            stream: None,
            topic: TOPIC.into(),
            content: "a note from the bot".into(),
        },
    );
    server.on(
        Endpoint::GetEvents,
        2,
        Moment::OnArrival,
        server.human_reply(TOPIC, "human"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "human");
    assert_eq!(reply.sender_email, "alice@example.com");
}

#[tokio::test]
async fn only_replies_exactly_in_the_topic_count_even_when_the_narrow_is_loose() {
    let server = server(30).await;
    server.set_topic_match(TopicMatch::StreamOnly);
    let client = client(&server);
    let bob = server.bob();
    for (topic, content) in [
        ("Agent Q #10 — x", "wrong topic (#10)"),
        ("Agent Q #1 — x and more", "wrong topic (longer)"),
        ("Agent Q #1 — ", "wrong topic (shorter)"),
    ] {
        server.on(
            Endpoint::GetEvents,
            0,
            Moment::OnArrival,
            Action::Post {
                sender: bob.clone(),
                stream: None,
                topic: topic.into(),
                content: content.into(),
            },
        );
    }
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::OnArrival,
        Action::Post {
            sender: bob.clone(),
            stream: Some("elsewhere".into()),
            topic: TOPIC.into(),
            content: "wrong stream".into(),
        },
    );
    server.on(
        Endpoint::GetEvents,
        2,
        Moment::OnArrival,
        server.human_reply("AGENT Q #1 — X", "right topic, other case"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "right topic, other case");
    assert!(server.count(Endpoint::GetEvents) >= 3);
}

#[tokio::test]
async fn a_word_matching_topic_is_rejected() {
    let server = server(30).await;
    server.set_topic_match(TopicMatch::WordMatch);
    let client = client(&server);
    server.on(
        Endpoint::GetEvents,
        0,
        Moment::OnArrival,
        server.human_reply("deploy staging now", "word match only"),
    );
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::OnArrival,
        server.human_reply("deploy", "exact"),
    );
    let reply = within(client.ask("deploy", "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "exact");
    assert!(
        server.count(Endpoint::GetEvents) >= 2,
        "the word match was delivered and had to be filtered"
    );
}

#[tokio::test]
async fn duplicate_delivery_returns_each_reply_once() {
    let server = server(30).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    server.fault_next(Endpoint::GetEvents, 100, ZulipFault::DuplicateDelivery);
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::OnArrival,
        server.human_reply(TOPIC, "first"),
    );
    let first = within(client.ask(TOPIC, "q1?", &cancel)).await.unwrap();
    assert_eq!(first.text, "first");
    // The follow-up's queue re-delivers its batches too; "first" must not come back.
    let polls = server.count(Endpoint::GetEvents);
    server.on(
        Endpoint::GetEvents,
        polls + 2,
        Moment::OnArrival,
        server.human_reply(TOPIC, "second"),
    );
    let second = within(client.ask(TOPIC, "q2?", &cancel)).await.unwrap();
    assert_eq!(second.text, "second");
    assert!(second.message_id > first.message_id);
}
