//! Web API faults: 429 with `Retry-After`, 5xx, connection resets before and after a post took
//! effect (never a second post), refused tokens and channels (fatal, with Slack's code).

use std::time::{Duration, Instant};

use tether_slack::{ReplyBody, SlackError};
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::{SlackFault, SlackMethod};
use tokio_util::sync::CancellationToken;

use super::common::{WAIT, ask, client, question, server, within};

const HUMAN: &str = FakeSlackServer::HUMAN;

#[tokio::test]
async fn a_rate_limited_post_waits_retry_after_then_posts_once() {
    let server = server().await;
    let client = client(&server);
    server.fault(
        SlackMethod::PostMessage,
        1,
        SlackFault::RateLimited {
            retry_after_secs: 1,
        },
    );
    let started = Instant::now();
    let pending = ask(&client, "Rate limited?", &[], None).await;
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );
    assert_eq!(server.requests(SlackMethod::PostMessage), 2);
    assert_eq!(server.questions().len(), 1);
    drop(pending);
}

#[tokio::test]
async fn server_errors_and_resets_are_retried_without_posting_twice() {
    for fault in [
        SlackFault::ServerError(503),
        SlackFault::ConnectionReset,
        SlackFault::ResetAfterHandling,
    ] {
        let server = server().await;
        let client = client(&server);
        server.fault(SlackMethod::PostMessage, 1, fault.clone());
        server.fault(SlackMethod::AuthTest, 1, SlackFault::ServerError(502));
        let pending = ask(&client, "Flaky?", &[], None).await;
        assert_eq!(server.questions().len(), 1, "{fault:?}");
        assert_eq!(
            server.questions()[0].ts,
            pending.question_ts().as_str(),
            "{fault:?}: the stored post is the one waited on"
        );
    }
}

#[tokio::test]
async fn a_follow_up_whose_answer_was_lost_is_found_in_its_thread() {
    let server = server().await;
    let client = client(&server);
    let first = ask(&client, "First?", &[], None).await;
    let thread = first.thread();
    server.fault(SlackMethod::PostMessage, 1, SlackFault::ResetAfterHandling);
    let follow_up = ask(&client, "Then?", &[], Some(&thread)).await;
    assert_eq!(server.questions().len(), 2, "the follow-up is posted once");
    assert_eq!(
        server.requests(SlackMethod::Replies),
        1,
        "found by its nonce in the thread"
    );
    assert_eq!(follow_up.thread(), thread);
}

#[tokio::test]
async fn catch_up_failures_are_retried_while_waiting() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Catch up?", &[], None).await;
    let thread = pending.thread();
    server.reply(thread.ts.as_str(), HUMAN, "said before anyone listened");
    server.fault(SlackMethod::Replies, 1, SlackFault::ServerError(500));
    server.fault(
        SlackMethod::Replies,
        1,
        SlackFault::RateLimited {
            retry_after_secs: 0,
        },
    );
    server.fault(SlackMethod::Replies, 1, SlackFault::ConnectionReset);
    server.fault(
        SlackMethod::ConnectionsOpen,
        2,
        SlackFault::ServerError(502),
    );
    let reply = within(pending.wait(&CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(
        reply.body,
        ReplyBody::Text("said before anyone listened".into())
    );
    assert_eq!(server.requests(SlackMethod::Replies), 4);
}

#[tokio::test]
async fn one_item_pages_are_followed_to_the_reply() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Paged?", &[], None).await;
    let ts = pending.thread().ts;
    server.post_as_bot(ts.as_str(), "noise 1");
    server.post_as_bot(ts.as_str(), "noise 2");
    server.reply(ts.as_str(), HUMAN, "found on page 4");
    server.set_page_limit(Some(1));
    let reply = within(pending.wait(&CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.body, ReplyBody::Text("found on page 4".into()));
}

#[tokio::test]
async fn a_refused_channel_or_token_is_fatal_and_named() {
    let server = server().await;
    let client = client(&server);
    server.fault(
        SlackMethod::PostMessage,
        1,
        SlackFault::Error("not_in_channel".into()),
    );
    let (text, blocks) = question("Q?", &[], false);
    let err = within(client.post_question(&text, blocks, 0, None, &CancellationToken::new()))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        SlackError::Rejected {
            method: "chat.postMessage",
            error: "not_in_channel".into()
        }
    );
    let pending = ask(&client, "Q?", &[], None).await;
    server.fault(
        SlackMethod::ConnectionsOpen,
        1,
        SlackFault::Error("invalid_auth".into()),
    );
    let err = tokio::time::timeout(WAIT, pending.wait(&CancellationToken::new()))
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            err,
            SlackError::Auth {
                token: "app-level token",
                ..
            }
        ),
        "{err}"
    );
}
