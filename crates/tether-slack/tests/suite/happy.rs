//! A plain question answered by a reply in its thread, a choice answered by a button or by a
//! typed reply, and a follow-up in the same thread answered only by what comes after it.

use std::sync::Arc;

use tether_slack::{ReplyBody, Thread, option_action_id};
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::{BOT_ID, SlackMethod};
use tokio_util::sync::CancellationToken;

use super::common::{ask, client, labels, server, within};

const HUMAN: &str = FakeSlackServer::HUMAN;

#[tokio::test]
async fn a_plain_question_is_answered_by_a_reply_in_its_thread() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Ship it?", &[], None).await;
    let thread = pending.thread();
    assert_eq!(
        thread.ts,
        *pending.question_ts(),
        "a new question starts its thread"
    );
    let posted = server.questions();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].bot_id.as_deref(), Some(BOT_ID));
    assert!(posted[0].metadata.is_some(), "the post carries its nonce");
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server
        .wait_for_sockets(1, super::common::WAIT)
        .await
        .unwrap();
    server.reply(thread.ts.as_str(), HUMAN, "yes, <ship> & tag");
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Text("yes, <ship> & tag".into()));
    assert_eq!(reply.user, HUMAN);
    assert_eq!(server.questions().len(), 1, "posted once");
}

#[tokio::test]
async fn a_choice_is_answered_by_its_button_and_the_question_can_be_marked_answered() {
    let server = server().await;
    let client = client(&server);
    let options = labels(&["Postgres", "SQLite"]);
    let pending = ask(&client, "Which database?", &options, None).await;
    let question = pending.question_ts().clone();
    let blocks = server.questions()[0].blocks.to_string();
    assert!(
        blocks.contains("tether_option_0") && blocks.contains("SQLite"),
        "{blocks}"
    );
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server
        .wait_for_sockets(1, super::common::WAIT)
        .await
        .unwrap();
    server.press_button(question.as_str(), HUMAN, &option_action_id(1));
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Choice(1));
    assert_eq!(reply.responder(), "ada");
    let (text, blocks) = super::common::question("Which database?", &[], false);
    within(client.update(
        FakeSlackServer::CHANNEL,
        &question,
        &text,
        &blocks,
        &CancellationToken::new(),
    ))
    .await
    .unwrap();
    let updated = &server.questions()[0];
    assert_eq!(updated.edits, 1);
    assert!(!updated.blocks.to_string().contains("tether_option_0"));
    assert!(!server.acks().is_empty(), "the click was acknowledged");
}

#[tokio::test]
async fn a_choice_can_be_typed_instead() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Which?", &labels(&["A", "B"]), None).await;
    let thread = pending.thread();
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server
        .wait_for_sockets(1, super::common::WAIT)
        .await
        .unwrap();
    server.reply(thread.ts.as_str(), HUMAN, "2");
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(
        reply.body,
        ReplyBody::Text("2".into()),
        "read against the options by the store"
    );
}

#[tokio::test]
async fn a_follow_up_posts_in_the_same_thread_and_ignores_older_replies() {
    let server = server().await;
    let client = client(&server);
    let first = ask(&client, "First?", &[], None).await;
    let thread: Thread = first.thread();
    server.reply(thread.ts.as_str(), HUMAN, "first answer");
    let reply = within(first.wait(&CancellationToken::new())).await.unwrap();
    assert_eq!(reply.body, ReplyBody::Text("first answer".into()));
    let follow_up = ask(&client, "And then?", &[], Some(&thread)).await;
    assert_eq!(follow_up.thread(), thread);
    assert!(*follow_up.question_ts() > thread.ts);
    let stored = server.questions();
    assert_eq!(stored[1].thread_ts.as_deref(), Some(thread.ts.as_str()));
    let waiting = tokio::spawn(async move { follow_up.wait(&CancellationToken::new()).await });
    server
        .wait_for_sockets(1, super::common::WAIT)
        .await
        .unwrap();
    let before = server.requests(SlackMethod::Replies);
    server.reply(thread.ts.as_str(), HUMAN, "second answer");
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Text("second answer".into()));
    assert!(server.requests(SlackMethod::Replies) <= before + 1);
}

#[tokio::test]
async fn noise_never_answers() {
    let server = server().await;
    let client = client(&server);
    let pending = ask(&client, "Which?", &labels(&["A", "B"]), None).await;
    let thread = pending.thread();
    let question = pending.question_ts().clone();
    let other = ask(&client, "Other question", &labels(&["X", "Y"]), None).await;
    let answered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&answered);
    let waiting = tokio::spawn(async move {
        let reply = pending.wait(&CancellationToken::new()).await;
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        reply
    });
    server
        .wait_for_sockets(1, super::common::WAIT)
        .await
        .unwrap();
    let ts = thread.ts.as_str();
    server.post_as_bot(ts, "the bot itself");
    server.post_in(
        FakeSlackServer::CHANNEL,
        None,
        HUMAN,
        "top level, not in the thread",
    );
    server.post_in(
        FakeSlackServer::CHANNEL,
        Some(other.question_ts().as_str()),
        HUMAN,
        "another thread",
    );
    server.post_in(
        FakeSlackServer::OTHER_CHANNEL,
        None,
        HUMAN,
        "another channel",
    );
    server.press_button(other.question_ts().as_str(), HUMAN, &option_action_id(0));
    server.press_button(question.as_str(), HUMAN, "not_ours");
    let edited = server.post_in(FakeSlackServer::CHANNEL, None, HUMAN, "x");
    server.edit(&edited, HUMAN, "edited");
    // Everything above has been delivered once its envelopes are acknowledged.
    tether_testkit::wait_until_async("the noise acknowledged", super::common::WAIT, || {
        (server.acks().len() >= 8).then_some(())
    })
    .await
    .unwrap();
    assert!(!answered.load(std::sync::atomic::Ordering::SeqCst));
    server.reply(ts, HUMAN, "the answer");
    let reply = within(waiting).await.unwrap().unwrap();
    assert_eq!(reply.body, ReplyBody::Text("the answer".into()));
}

#[tokio::test]
async fn people_are_named_by_users_info_once() {
    let server = server().await;
    let client = client(&server);
    assert_eq!(client.user_name(HUMAN).await.as_deref(), Some("Ada"));
    assert_eq!(client.user_name(HUMAN).await.as_deref(), Some("Ada"));
    assert_eq!(server.requests(SlackMethod::UsersInfo), 1, "remembered");
    assert_eq!(client.user_name("U0NOBODY").await, None);
}
