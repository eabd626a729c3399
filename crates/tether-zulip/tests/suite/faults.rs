//! Each fault of the fake server on its own: the client retries what may succeed later, stops on
//! what cannot, never posts twice, and never loses a reply when a queue expires.

use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::zulip_server::{Action, Endpoint, Moment, ZulipFault};
use tether_zulip::{ClientOptions, RetryPolicy, ZulipClient, ZulipError};
use tokio_util::sync::CancellationToken;

use super::common::{TOPIC, client, fast_options, server, settings, within};

fn requests_to(
    server: &tether_testkit::FakeZulipServer,
    endpoint: Endpoint,
) -> Vec<tether_testkit::zulip_server::ZulipRequest> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.endpoint == Some(endpoint))
        .collect()
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_for_its_float_retry_after() {
    let server = server(30).await;
    let client = client(&server);
    for endpoint in [
        Endpoint::UsersMe,
        Endpoint::Register,
        Endpoint::SendMessage,
        Endpoint::GetEvents,
    ] {
        server.fault_at(endpoint, 0, ZulipFault::RateLimited { retry_after: 0.15 });
    }
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::OnArrival,
        server.human_reply(TOPIC, "ok"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "ok");
    for endpoint in [
        Endpoint::UsersMe,
        Endpoint::Register,
        Endpoint::SendMessage,
        Endpoint::GetEvents,
    ] {
        let requests = requests_to(&server, endpoint);
        let gap = requests[1].at - requests[0].at;
        assert!(
            gap >= Duration::from_millis(150),
            "{endpoint:?} retried after {gap:?}"
        );
    }
    assert_eq!(server.bot_messages().len(), 1);
}

#[tokio::test]
async fn server_errors_and_resets_are_retried() {
    let server = server(30).await;
    let client = client(&server);
    server.fault_at(Endpoint::UsersMe, 0, ZulipFault::ServerError(502));
    server.fault_at(Endpoint::Register, 0, ZulipFault::ConnectionReset);
    server.fault_at(Endpoint::Register, 1, ZulipFault::ServerError(503));
    server.fault_at(Endpoint::SendMessage, 0, ZulipFault::ServerError(500));
    server.fault_at(Endpoint::SendMessage, 1, ZulipFault::ConnectionReset);
    server.fault_at(Endpoint::GetEvents, 2, ZulipFault::ServerError(504));
    server.fault_at(Endpoint::GetEvents, 3, ZulipFault::ConnectionReset);
    server.on(
        Endpoint::GetEvents,
        5,
        Moment::OnArrival,
        server.human_reply(TOPIC, "ok"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "ok");
    assert_eq!(
        server.bot_messages().len(),
        1,
        "the question was posted once"
    );
    assert_eq!(server.count(Endpoint::Register), 3);
}

#[tokio::test]
async fn backoff_grows_between_consecutive_failures() {
    let server = server(30).await;
    let options = ClientOptions {
        retry: RetryPolicy {
            initial: Duration::from_millis(20),
            max: Duration::from_secs(1),
            request_retries: 6,
        },
        ..fast_options()
    };
    let client = ZulipClient::with_options(&settings(&server), options).unwrap();
    server.fault_next(Endpoint::GetEvents, 4, ZulipFault::ServerError(502));
    server.on(
        Endpoint::GetEvents,
        4,
        Moment::OnArrival,
        server.human_reply(TOPIC, "ok"),
    );
    within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    let polls = requests_to(&server, Endpoint::GetEvents);
    let gaps: Vec<Duration> = polls.windows(2).map(|w| w[1].at - w[0].at).collect();
    // Equal jitter: the n-th retry waits between 20·2^n/2 and 20·2^n ms.
    for (n, gap) in gaps.iter().enumerate() {
        let floor = Duration::from_millis(10 << n);
        assert!(
            *gap >= floor,
            "retry {n} after {gap:?}, expected >= {floor:?}"
        );
    }
}

#[tokio::test]
async fn a_post_whose_answer_was_lost_is_not_posted_twice() {
    let server = server(30).await;
    let client = client(&server);
    server.fault_at(Endpoint::SendMessage, 0, ZulipFault::ResetAfterHandling);
    let cancel = CancellationToken::new();
    let pending = within(client.post_question(TOPIC, "q?", &cancel))
        .await
        .unwrap();
    let posted = server.bot_messages();
    assert_eq!(posted.len(), 1, "posted once");
    assert_eq!(pending.question_id().get(), posted[0].id);
    assert_eq!(server.count(Endpoint::SendMessage), 1);
    // The look-up read the queue without blocking.
    let peek = &requests_to(&server, Endpoint::GetEvents)[0];
    assert_eq!(peek.param("dont_block"), Some("true"));
    server.post_as_human(TOPIC, "yes");
    assert_eq!(within(pending.wait(&cancel)).await.unwrap().text, "yes");
}

#[tokio::test]
async fn a_lost_post_answer_and_a_lost_queue_still_post_once() {
    let server = server(30).await;
    let client = client(&server);
    server.fault_at(Endpoint::SendMessage, 0, ZulipFault::ResetAfterHandling);
    // The look-up finds the queue gone, so it searches the topic's newest messages instead.
    server.fault_at(Endpoint::GetEvents, 0, ZulipFault::BadEventQueue);
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::OnArrival,
        server.human_reply(TOPIC, "ok"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "ok");
    assert_eq!(server.bot_messages().len(), 1);
    let search = &requests_to(&server, Endpoint::GetMessages)[0];
    assert_eq!(search.param("anchor"), Some("newest"));
}

#[tokio::test]
async fn an_expired_queue_is_replaced_and_the_replies_posted_meanwhile_are_fetched() {
    let server = server(30).await;
    let client = client(&server);
    // Poll #1 finds its queue expired; the human replies before the client re-registers, so
    // only GET /messages can find the reply.
    server.fault_at(Endpoint::GetEvents, 1, ZulipFault::BadEventQueue);
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::AfterHandling,
        server.human_reply(TOPIC, "while you were away"),
    );
    let cancel = CancellationToken::new();
    let pending = within(client.post_question(TOPIC, "q?", &cancel))
        .await
        .unwrap();
    let question = pending.question_id();
    let reply = within(pending.wait(&cancel)).await.unwrap();
    assert_eq!(reply.text, "while you were away");
    assert_eq!(server.count(Endpoint::Register), 2);
    let fetch = &requests_to(&server, Endpoint::GetMessages)[0];
    assert_eq!(fetch.param("anchor"), Some(question.to_string().as_str()));
    assert_eq!(fetch.param("include_anchor"), Some("false"));
    assert_eq!(fetch.param("num_before"), Some("0"));
    assert_eq!(fetch.param("apply_markdown"), Some("false"));
    let narrow: Value = serde_json::from_str(fetch.param("narrow").unwrap()).unwrap();
    assert_eq!(
        narrow,
        json!([{"operator": "stream", "operand": "tether"}, {"operator": "topic", "operand": TOPIC}])
    );
    // The new queue was registered before the fetch.
    let order: Vec<_> = server
        .requests()
        .iter()
        .filter_map(|r| r.endpoint)
        .collect();
    let second_register = order
        .iter()
        .rposition(|e| *e == Endpoint::Register)
        .unwrap();
    let fetch_at = order
        .iter()
        .position(|e| *e == Endpoint::GetMessages)
        .unwrap();
    assert!(second_register < fetch_at);
    assert_eq!(server.live_queues().len(), 0);
}

#[tokio::test]
async fn queue_expiry_in_the_middle_of_a_long_poll_loses_nothing() {
    let server = server(3_000).await;
    let client = client(&server);
    let asking = tokio::spawn({
        let client = client.clone();
        async move { client.ask(TOPIC, "q?", &CancellationToken::new()).await }
    });
    // Poll #0 returns the question's echo; poll #1 is the one that waits.
    server
        .wait_for_count(Endpoint::GetEvents, 2, super::common::WAIT)
        .await
        .unwrap();
    let expired_at = std::time::Instant::now();
    server.expire_queues();
    server.post_as_human(TOPIC, "mid-wait");
    let reply = within(asking).await.unwrap().unwrap();
    assert_eq!(reply.text, "mid-wait");
    assert!(
        expired_at.elapsed() < Duration::from_secs(2),
        "the waiting poll was not ended by the expiry"
    );
    assert_eq!(server.count(Endpoint::Register), 2);
    assert_eq!(server.count(Endpoint::GetMessages), 1);
}

#[tokio::test]
async fn catching_up_pages_forward_until_the_newest_message() {
    let server = server(30).await;
    let options = tether_zulip::ClientOptions {
        catch_up_page: 2,
        ..fast_options()
    };
    let client = ZulipClient::with_options(&settings(&server), options).unwrap();
    let bot = server.bot();
    server.fault_at(Endpoint::GetEvents, 1, ZulipFault::BadEventQueue);
    for n in 0..5 {
        server.on(
            Endpoint::GetEvents,
            1,
            Moment::AfterHandling,
            Action::Post {
                sender: bot.clone(),
                stream: None,
                topic: TOPIC.into(),
                content: format!("bot {n}"),
            },
        );
    }
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::AfterHandling,
        server.human_reply(TOPIC, "after five"),
    );
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::AfterHandling,
        server.human_reply(TOPIC, "later"),
    );
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.text, "after five");
    assert_eq!(server.count(Endpoint::GetMessages), 3, "pages of 2, 2, 2");
}

#[tokio::test]
async fn wrong_credentials_fail_at_once_with_an_auth_error() {
    let server = server(30).await;
    let mut settings = settings(&server);
    settings.api_key = tether_config::Secret::new("not-the-key");
    let client = ZulipClient::with_options(&settings, fast_options()).unwrap();
    let err = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ZulipError::Auth { status: 401, code, .. } if code == "INVALID_API_KEY"),
        "{err:?}"
    );
    assert_eq!(server.total_requests(), 1, "not retried");
}

#[tokio::test]
async fn a_missing_stream_is_reported_and_the_queue_deregistered() {
    let server = server(30).await;
    let mut settings = settings(&server);
    settings.stream = "no-such-stream".into();
    let client = ZulipClient::with_options(&settings, fast_options()).unwrap();
    let err = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ZulipError::Rejected { code, .. } if code == "STREAM_DOES_NOT_EXIST"),
        "{err:?}"
    );
    assert_eq!(server.count(Endpoint::DeleteQueue), 1);
    assert!(server.live_queues().is_empty());
}

#[tokio::test]
async fn request_retries_are_bounded_and_the_queue_deregistered() {
    let server = server(30).await;
    server.fault_next(Endpoint::SendMessage, 100, ZulipFault::ServerError(503));
    let options = ClientOptions {
        retry: RetryPolicy {
            request_retries: 3,
            ..fast_options().retry
        },
        ..fast_options()
    };
    let client = ZulipClient::with_options(&settings(&server), options).unwrap();
    let err = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ZulipError::Server { status: 503, .. }),
        "{err:?}"
    );
    assert_eq!(
        server.count(Endpoint::SendMessage),
        4,
        "one try and three retries"
    );
    assert!(server.live_queues().is_empty());
}
