//! Answers on Telegram: a reply to the question, a button, a typed number; the noise a chat
//! carries is ignored; an answer elsewhere is noted, and one on Telegram is noted elsewhere.

use std::time::Duration;

use tether_human::broker::answer;
use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::Method;
use tokio_util::sync::CancellationToken;

use super::{CHAT, LIMIT, ask, posted, setup};
use crate::common::telegram_channel;

#[tokio::test]
async fn a_reply_to_the_question_answers_it() {
    let s = setup().await;
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), CancellationToken::new()).await });
    let question = posted(&s.server, 1).await;
    let text = &s.server.bot_messages(CHAT)[0].text;
    assert!(text.contains("Merge the migration now?") && text.contains("all tests pass"));
    s.server
        .reply(&s.server.alice(), CHAT, question, "Yes, merge it.");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            got.text.as_str(),
            got.channel.as_str(),
            got.responder.as_str()
        ),
        ("Yes, merge it.", "telegram", "Alice")
    );
    let posts = s.journal.store().posts(&got.question_id).unwrap();
    assert_eq!(posts[0].external_ref["message_id"], question);
    assert_eq!(s.server.bot_messages(CHAT).len(), 1, "posted once");
}

#[tokio::test]
async fn a_pressed_button_is_that_choice() {
    let s = setup().await;
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move {
        b.ask(
            ask(&["Merge now", "Wait for review"]),
            CancellationToken::new(),
        )
        .await
    });
    let question = posted(&s.server, 1).await;
    let markup = s.server.bot_messages(CHAT)[0].reply_markup.clone().unwrap();
    let second = markup["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter())
        .nth(1)
        .unwrap()
        .clone();
    assert_eq!(second["text"], "Wait for review");
    let data = second["callback_data"].as_str().unwrap();
    s.server.press(&s.server.bob(), CHAT, question, data);
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.choice),
        ("Wait for review", Some(1))
    );
    assert_eq!(got.responder, "Bob");
    tether_testkit::wait_until_async("the press answered and the keyboard gone", LIMIT, || {
        let answered = s.server.presses().iter().all(|p| p.answered);
        let closed = s.server.bot_messages(CHAT)[0].reply_markup.is_none();
        (answered && closed).then_some(())
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_number_typed_in_reply_is_that_choice() {
    let s = setup().await;
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move {
        b.ask(ask(&["Merge now", "Wait"]), CancellationToken::new())
            .await
    });
    let question = posted(&s.server, 1).await;
    s.server.reply(&s.server.alice(), CHAT, question, "2");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.choice, Some(1));
}

#[tokio::test]
async fn noise_is_ignored_and_an_answer_elsewhere_is_noted() {
    let s = setup().await;
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), CancellationToken::new()).await });
    let question = posted(&s.server, 1).await;
    // The bot itself, another chat, a message replying to nothing: none is the answer.
    s.server.post_as_bot(CHAT, Some(question), "bot echo");
    s.server.post(
        &s.server.alice(),
        FakeTelegramServer::OTHER,
        None,
        "elsewhere",
    );
    s.server.post(&s.server.alice(), CHAT, None, "chatter");
    s.server
        .wait_for_count(Method::GetUpdates, 3, LIMIT)
        .await
        .unwrap();
    let id = s.journal.store().pending_questions().unwrap()[0].id.clone();
    answer(
        &s.journal.store(),
        &s.ws.state_dir(),
        &id,
        "no",
        "cli",
        "carol",
    )
    .unwrap();
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((got.text.as_str(), got.channel.as_str()), ("no", "cli"));
    let notes: Vec<_> = s
        .server
        .bot_messages(CHAT)
        .into_iter()
        .filter(|m| m.text != "bot echo")
        .collect();
    assert_eq!(notes.len(), 2, "the question and the note");
    assert_eq!(notes[1].reply_to, Some(question));
    assert!(
        notes[1].text.contains("cli") && notes[1].text.contains("carol"),
        "{}",
        notes[1].text
    );
    let registry = std::fs::read_dir(s.registry.join("7001").join("posts")).unwrap();
    assert_eq!(registry.count(), 0, "the post is no longer waiting");
}

#[tokio::test]
async fn offered_on_telegram_and_zulip_at_once_it_is_answered_once_and_zulip_is_told() {
    let s = setup().await;
    let zulip = tether_testkit::FakeZulipServer::builder()
        .longpoll_timeout(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let (journal, channel) = telegram_channel(&s.server, CHAT, &s.ws, &s.registry);
    let (_, zulip_broker) = crate::common::zulip_broker(&zulip, &s.ws);
    let broker = zulip_broker.with_channel(channel);
    let waiting = tokio::spawn(async move {
        broker
            .ask(ask(&["Now", "Later"]), CancellationToken::new())
            .await
    });
    let question = posted(&s.server, 1).await;
    zulip.wait_for_messages(1, LIMIT).await.unwrap();
    let data = s.server.bot_messages(CHAT)[0].reply_markup.clone().unwrap()["inline_keyboard"][0]
        [0]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned();
    s.server.press(&s.server.alice(), CHAT, question, &data);
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str(), got.choice),
        ("Now", "telegram", Some(0))
    );
    let topic = zulip.bot_messages()[0].topic.clone();
    let in_topic = zulip.messages_in(&topic);
    let note = &in_topic.last().unwrap().content;
    assert!(
        note.contains("telegram") && note.contains("Alice"),
        "{note}"
    );
    let stored = journal.store().question(&got.question_id).unwrap();
    assert_eq!(stored.channel.as_deref(), Some("telegram"));
    assert_eq!(
        s.server.bot_messages(CHAT).len(),
        1,
        "no note on the winning channel"
    );
}
