//! Socket Mode faults: `disconnect` of every reason, a socket dropped mid-wait, a half-open
//! socket, a reply posted while no socket is open, duplicate deliveries; a resumed wait after a
//! crash; and the cost of waiting: no HTTP request while the socket is up.

use std::time::Instant;

use tether_slack::ReplyBody;
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::SlackMethod;
use tokio_util::sync::CancellationToken;

use super::common::{WAIT, ask, client, server, within};

const HUMAN: &str = FakeSlackServer::HUMAN;

#[tokio::test]
async fn every_disconnect_reason_reconnects_and_the_reply_still_arrives() {
    for reason in [
        "refresh_requested",
        "warning",
        "too_many_websockets",
        "link_disabled",
    ] {
        let server = server().await;
        let client = client(&server);
        let pending = ask(&client, "Reconnect?", &[], None).await;
        let ts = pending.thread().ts;
        let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
        server.wait_for_sockets(1, WAIT).await.unwrap();
        server.disconnect_all(reason);
        tether_testkit::wait_until_async("a new socket", WAIT, || {
            (server.hellos() >= 2 && server.open_sockets() == 1).then_some(())
        })
        .await
        .unwrap();
        server.reply(ts.as_str(), HUMAN, reason);
        let reply = within(waiting).await.unwrap().unwrap();
        assert_eq!(reply.body, ReplyBody::Text(reason.into()));
    }
}

#[tokio::test]
async fn a_reply_posted_while_the_socket_was_down_is_caught_up() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Down?", &[], None).await;
    let ts = pending.thread().ts;
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.close_gate();
    server.drop_sockets();
    let dropped = server.dropped_events();
    server.reply(ts.as_str(), HUMAN, "while you were away");
    assert_eq!(
        server.dropped_events(),
        dropped + 1,
        "no socket was open for the reply"
    );
    let replies_before = server.requests(SlackMethod::Replies);
    server.open_gate();
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Text("while you were away".into()));
    assert_eq!(server.requests(SlackMethod::Replies), replies_before + 1);
}

#[tokio::test]
async fn a_half_open_socket_is_noticed_and_replaced() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Silent?", &[], None).await;
    let ts = pending.thread().ts;
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.freeze_sockets();
    server.reply(ts.as_str(), HUMAN, "into the void");
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Text("into the void".into()));
    assert!(server.hellos() >= 2);
}

#[tokio::test]
async fn duplicate_deliveries_give_one_answer_and_are_all_acknowledged() {
    let server = server().await;
    let client = client(&server);
    server.duplicate_deliveries(true);
    let pending = ask(&client, "Twice?", &[], None).await;
    let ts = pending.thread().ts;
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.reply(ts.as_str(), HUMAN, "once");
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Text("once".into()));
    tether_testkit::wait_until_async("both copies acknowledged", WAIT, || {
        (server.acks().len() >= 2).then_some(())
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn waiting_makes_no_http_request_while_the_socket_is_up() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Quiet?", &[], None).await;
    let ts = pending.thread().ts;
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server.wait_for_sockets(1, WAIT).await.unwrap();
    tether_testkit::wait_until_async("the first catch-up", WAIT, || {
        (server.requests(SlackMethod::Replies) == 1).then_some(())
    })
    .await
    .unwrap();
    let since = Instant::now();
    for n in 0..20 {
        server.post_as_bot(ts.as_str(), &format!("noise {n}"));
    }
    tether_testkit::wait_until_async("the noise acknowledged", WAIT, || {
        (server.acks().len() >= 20).then_some(())
    })
    .await
    .unwrap();
    server.reply(ts.as_str(), HUMAN, "now");
    within(waiting).await.unwrap().unwrap();
    assert_eq!(
        server.all_requests_since(since),
        0,
        "no request while waiting"
    );
}

#[tokio::test]
async fn a_crashed_wait_resumes_on_the_same_post_and_finds_the_reply_given_meanwhile() {
    let server = server().await;
    let (thread, question) = {
        let client = client(&server);
        let pending = ask(&client, "Survive a crash?", &[], None).await;
        (pending.thread(), pending.question_ts().clone())
        // The process dies here: no socket, nobody waits.
    };
    server.reply(thread.ts.as_str(), HUMAN, "answered while down");
    let client = client(&server);
    let pending = within(client.pending(&thread, &question, 0, &CancellationToken::new()))
        .await
        .unwrap();
    let reply = within(pending.wait(&CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.body, ReplyBody::Text("answered while down".into()));
    assert_eq!(server.questions().len(), 1, "never posted again");
}

#[tokio::test]
async fn the_socket_closes_when_nobody_waits_and_cancelling_leaves_the_question() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Cancel?", &[], None).await;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let waiting = tokio::spawn(async move { pending.wait(&stop).await });
    server.wait_for_sockets(1, WAIT).await.unwrap();
    cancel.cancel();
    let err = within(waiting).await.unwrap().unwrap_err();
    assert_eq!(err, tether_slack::SlackError::Cancelled);
    tether_testkit::wait_until_async("the socket closed", WAIT, || {
        (server.open_sockets() == 0).then_some(())
    })
    .await
    .unwrap();
    assert_eq!(client.connections(), 1);
}
