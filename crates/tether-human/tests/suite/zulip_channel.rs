//! The broker's Zulip channel against the fake Zulip server: a reply in the topic answers the
//! question; an answer from another channel is noted in the topic.

use std::time::Duration;

use tether_config::Workspace;
use tether_human::Broker;
use tether_human::broker::answer;
use tether_store::{Journal, NewQuestion, Store};
use tether_testkit::zulip_server::FakeZulipServer;
use tokio_util::sync::CancellationToken;

use crate::common::zulip_broker;

async fn setup() -> (
    tempfile::TempDir,
    Workspace,
    Journal,
    FakeZulipServer,
    Broker,
) {
    let server = FakeZulipServer::builder()
        .longpoll_timeout(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let (journal, broker) = zulip_broker(&server, &ws);
    (dir, ws, journal, server, broker)
}

fn ask() -> NewQuestion {
    NewQuestion {
        question: "Merge the migration now?".into(),
        context: "all tests pass".into(),
        confidence: Some(20),
        ..NewQuestion::default()
    }
}

#[tokio::test]
async fn a_reply_in_the_topic_answers_the_question() {
    let (_d, _ws, journal, server, broker) = setup().await;
    let b = broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(), CancellationToken::new()).await });
    server
        .wait_for_messages(1, Duration::from_secs(10))
        .await
        .unwrap();
    let posted = server.bot_messages();
    assert_eq!(posted.len(), 1);
    let topic = posted[0].topic.clone();
    assert!(
        topic.starts_with("Agent Q #1 — Merge the migration"),
        "{topic}"
    );
    assert!(posted[0].content.contains("all tests pass"));
    server.post_as_human(&topic, "Yes, merge it.");
    let got = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("Yes, merge it.", "zulip")
    );
    let posts = journal.store().posts(&got.question_id).unwrap();
    assert_eq!(posts[0].external_ref["topic"], topic.as_str());
}

#[tokio::test]
async fn a_number_replied_in_the_topic_is_that_choice() {
    let (_d, _ws, journal, server, broker) = setup().await;
    let b = broker.clone();
    let mut question = ask();
    question.options = vec!["Merge now".into(), "Wait for review".into()];
    let waiting = tokio::spawn(async move { b.ask(question, CancellationToken::new()).await });
    server
        .wait_for_messages(1, Duration::from_secs(10))
        .await
        .unwrap();
    let posted = server.bot_messages();
    assert!(
        posted[0]
            .content
            .contains("**Choices:**\n1. Merge now\n2. Wait for review\n"),
        "{}",
        posted[0].content
    );
    assert!(
        posted[0]
            .content
            .contains("with the number or your own words")
    );
    server.post_as_human(&posted[0].topic, "2");
    let got = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.choice, got.channel.as_str()),
        ("Wait for review", Some(1), "zulip")
    );
    let stored = journal.store().question(&got.question_id).unwrap();
    assert_eq!(stored.choice, Some(1));
}

#[tokio::test]
async fn an_answer_elsewhere_is_noted_in_the_topic() {
    let (_d, ws, _journal, server, broker) = setup().await;
    let b = broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(), CancellationToken::new()).await });
    server
        .wait_for_messages(1, Duration::from_secs(10))
        .await
        .unwrap();
    let store = Store::open(ws.db_path()).unwrap();
    let q = store.pending_questions().unwrap().remove(0);
    answer(&store, &ws.state_dir(), &q.id, "Not yet.", "cli", "alice").unwrap();
    let got = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.channel, "cli");
    let notes = server.bot_messages();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[1].content.contains("alice"), "{}", notes[1].content);
}

#[tokio::test]
async fn a_follow_up_with_the_thread_id_goes_to_the_same_topic() {
    let (_d, _ws, _journal, server, broker) = setup().await;
    let b = broker.clone();
    let first = tokio::spawn(async move { b.ask(ask(), CancellationToken::new()).await });
    server
        .wait_for_messages(1, Duration::from_secs(10))
        .await
        .unwrap();
    let topic = server.bot_messages()[0].topic.clone();
    server.post_as_human(&topic, "Yes, merge it.");
    let answer = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .unwrap()
        .unwrap()
        .unwrap();

    let b = broker.clone();
    let follow_up = NewQuestion {
        question: "And the rollback script too?".into(),
        thread_id: Some(answer.thread_id.clone()),
        ..ask()
    };
    let second = tokio::spawn(async move { b.ask(follow_up, CancellationToken::new()).await });
    server
        .wait_for_messages(3, Duration::from_secs(10))
        .await
        .unwrap();
    let posted = server.bot_messages();
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(
        posted[1].topic, topic,
        "the follow-up stays in the conversation's topic"
    );
    server.post_as_human(&topic, "Yes, that too.");
    let got = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.text, "Yes, that too.");
    assert_eq!(got.thread_id, answer.thread_id);
}
