//! Where things go on Telegram: a topic per conversation in a chat with topics, else a reply
//! chain; follow-ups in the same place; a run's notices under its latest question.

use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::Method;
use tokio_util::sync::CancellationToken;

use super::{CHAT, LIMIT, ask, posted, setup};
use crate::common::{telegram_broker, telegram_channel};

#[tokio::test]
async fn in_a_chat_with_topics_a_conversation_opens_a_topic_and_a_message_there_answers() {
    let s = setup().await;
    let forum = FakeTelegramServer::FORUM;
    let (journal, broker) = telegram_broker(&s.server, forum, &s.ws, &s.registry);
    let b = broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), CancellationToken::new()).await });
    s.server
        .wait_for_count(Method::SendMessage, 1, LIMIT)
        .await
        .unwrap();
    let topics = s.server.topics();
    assert_eq!(topics.len(), 1);
    let (_, thread, name) = topics[0].clone();
    assert_eq!(name, "Merge the migration now?");
    let question = s.server.bot_messages(forum)[0].clone();
    assert_eq!(question.thread_id, Some(thread));
    // Chatter in the chat outside the topic is not the answer; a plain message in it is.
    s.server.post(&s.server.bob(), forum, None, "lunch?");
    s.server
        .post(&s.server.alice(), forum, Some(thread), "Yes, merge.");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.responder.as_str()),
        ("Yes, merge.", "Alice")
    );
    let posts = journal.store().posts(&got.question_id).unwrap();
    assert_eq!(posts[0].external_ref["thread_id"], thread);

    // A follow-up in the same conversation goes into the same topic.
    let mut follow_up = ask(&[]);
    follow_up.question = "And the old table?".into();
    follow_up.thread_id = Some(got.thread_id.clone());
    let b = broker.clone();
    let waiting = tokio::spawn(async move { b.ask(follow_up, CancellationToken::new()).await });
    s.server
        .wait_for_count(Method::SendMessage, 2, LIMIT)
        .await
        .unwrap();
    assert_eq!(s.server.topics().len(), 1, "no second topic");
    let second = s.server.bot_messages(forum)[1].clone();
    assert_eq!(second.thread_id, Some(thread));
    s.server
        .reply(&s.server.alice(), forum, second.message_id, "Drop it.");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.text, "Drop it.");
}

#[tokio::test]
async fn a_follow_up_in_a_reply_chain_replies_to_the_first_question() {
    let s = setup().await;
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), CancellationToken::new()).await });
    let first = posted(&s.server, 1).await;
    s.server.reply(&s.server.alice(), CHAT, first, "yes");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let mut follow_up = ask(&[]);
    follow_up.thread_id = Some(got.thread_id.clone());
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(follow_up, CancellationToken::new()).await });
    let second = posted(&s.server, 2).await;
    assert_eq!(s.server.bot_messages(CHAT)[1].reply_to, Some(first));
    assert!(s.server.topics().is_empty());
    s.server.reply(&s.server.alice(), CHAT, second, "also yes");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.text, "also yes");
}

#[tokio::test]
async fn a_notice_is_posted_in_the_chat_with_the_command_to_go_on() {
    let s = setup().await;
    let (_journal, channel) = telegram_channel(&s.server, CHAT, &s.ws, &s.registry);
    let run: tether_store::RunId = "r-7k2m9x".parse().unwrap();
    let notice = tether_human::Notice {
        kind: tether_config::NoticeKind::Paused,
        run_id: Some(run),
        text: "Run r-7k2m9x paused: the judge is unavailable.".into(),
        resume: Some("tether resume r-7k2m9x".into()),
    };
    tether_human::Channel::notice(channel.as_ref(), &notice).await;
    let posted = s.server.bot_messages(CHAT);
    assert_eq!(posted.len(), 1);
    assert_eq!(
        posted[0].text,
        "Run r-7k2m9x paused: the judge is unavailable.\nTo continue: tether resume r-7k2m9x"
    );
}

#[tokio::test]
async fn a_runs_notice_goes_under_its_latest_question_in_its_topic() {
    let s = setup().await;
    let forum = FakeTelegramServer::FORUM;
    let (_journal, broker) = telegram_broker(&s.server, forum, &s.ws, &s.registry);
    let (_, channel) = telegram_channel(&s.server, forum, &s.ws, &s.registry);
    let run = s
        .journal
        .store()
        .create_run(
            tether_store::RunKind::Ralph,
            s.ws.root(),
            &serde_json::json!({}),
        )
        .unwrap();
    let mut question = ask(&[]);
    question.run_id = Some(run.clone());
    let b = broker.clone();
    let waiting = tokio::spawn(async move { b.ask(question, CancellationToken::new()).await });
    s.server
        .wait_for_count(Method::SendMessage, 1, LIMIT)
        .await
        .unwrap();
    let asked = s.server.bot_messages(forum)[0].clone();
    s.server
        .reply(&s.server.alice(), forum, asked.message_id, "ok");
    tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let notice = tether_human::Notice {
        kind: tether_config::NoticeKind::Done,
        run_id: Some(run.clone()),
        text: format!("Run {run} is done."),
        resume: None,
    };
    tether_human::Channel::notice(channel.as_ref(), &notice).await;
    let posted = s.server.bot_messages(forum);
    let last = posted.last().unwrap();
    assert_eq!(last.text, format!("Run {run} is done."));
    assert_eq!(
        (last.thread_id, last.reply_to),
        (asked.thread_id, Some(asked.message_id))
    );
}
