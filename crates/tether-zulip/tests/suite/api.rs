//! The low-level `ZulipApi` against the fake server: one request per call, typed errors.

use std::time::Duration;

use tether_testkit::zulip_server::{Endpoint, ZulipFault};
use tether_zulip::{Event, MessageId, ZulipApi, ZulipError};

use super::common::{TOPIC, fast_options, server, settings};

async fn api(server: &tether_testkit::FakeZulipServer) -> ZulipApi {
    ZulipApi::new(&settings(server), fast_options().api).unwrap()
}

#[tokio::test]
async fn the_bot_learns_its_own_user_id() {
    let server = server(20).await;
    let me = api(&server).await.me().await.unwrap();
    assert_eq!(me.user_id, tether_testkit::FakeZulipServer::BOT_ID);
    assert_eq!(me.email, server.bot_email());
}

#[tokio::test]
async fn a_queue_delivers_messages_and_heartbeats_then_is_deleted() {
    let server = server(20).await;
    let api = api(&server).await;
    let queue = api.register("tether", TOPIC).await.unwrap();
    assert_eq!(queue.last_event_id, -1);
    assert!(queue.feature_level.is_some());
    assert!(
        api.get_events(&queue.queue_id, -1, true)
            .await
            .unwrap()
            .is_empty()
    );

    let id = api
        .send_stream_message("tether", TOPIC, "hello")
        .await
        .unwrap();
    let events = api.get_events(&queue.queue_id, -1, false).await.unwrap();
    let [
        Event::Message {
            id: event_id,
            message,
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}");
    };
    assert_eq!(message.id, id);
    assert_eq!(message.subject, TOPIC);
    assert_eq!(message.stream_name(), Some("tether"));
    assert_eq!(message.content, "hello");

    let events = api
        .get_events(&queue.queue_id, *event_id, false)
        .await
        .unwrap();
    assert!(
        matches!(events.as_slice(), [Event::Heartbeat { .. }]),
        "{events:?}"
    );

    api.delete_queue(&queue.queue_id).await.unwrap();
    api.delete_queue(&queue.queue_id).await.unwrap(); // already gone counts as deleted
    let err = api.get_events(&queue.queue_id, -1, true).await.unwrap_err();
    assert_eq!(
        err,
        ZulipError::BadEventQueue {
            queue_id: queue.queue_id.clone()
        }
    );
}

#[tokio::test]
async fn messages_are_fetched_after_an_anchor_or_from_the_newest() {
    let server = server(20).await;
    let api = api(&server).await;
    let ids: Vec<u64> = (0..5)
        .map(|n| server.post_as_human(TOPIC, &format!("m{n}")))
        .collect();
    server.post_as_human("other topic", "elsewhere");
    let page = api
        .get_messages_after("tether", TOPIC, MessageId(ids[1]), 2)
        .await
        .unwrap();
    let got: Vec<_> = page.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(got, ["m2", "m3"]);
    assert!(!page.found_newest);
    let page = api.recent_messages("tether", TOPIC, 2).await.unwrap();
    let got: Vec<_> = page.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(got, ["m3", "m4"], "raw Markdown, the newest included");
}

#[tokio::test]
async fn errors_are_typed() {
    let server = server(20).await;
    let api = api(&server).await;
    server.fault_at(
        Endpoint::UsersMe,
        0,
        ZulipFault::RateLimited { retry_after: 0.25 },
    );
    server.fault_at(Endpoint::UsersMe, 1, ZulipFault::ServerError(502));
    server.fault_at(Endpoint::UsersMe, 2, ZulipFault::ConnectionReset);
    assert_eq!(
        api.me().await.unwrap_err(),
        ZulipError::RateLimited {
            retry_after: Duration::from_millis(250)
        }
    );
    let err = api.me().await.unwrap_err();
    assert!(
        matches!(&err, ZulipError::Server { status: 502, detail } if detail.contains("502 Bad Gateway")),
        "{err:?}"
    );
    let err = api.me().await.unwrap_err();
    assert!(matches!(err, ZulipError::Transport { .. }), "{err:?}");
    assert!(err.is_retryable());
    let err = api
        .send_stream_message("nope", TOPIC, "x")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ZulipError::Rejected { status: 400, code, .. } if code == "STREAM_DOES_NOT_EXIST"),
        "{err:?}"
    );
    assert!(!err.is_retryable());
}
