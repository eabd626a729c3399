//! The broker's Telegram channel against the fake Bot API: a reply to the question (or a button)
//! answers it, whichever process polls; faults and restarts lose and double nothing.

use std::time::Duration;

use tether_config::Workspace;
use tether_human::Broker;
use tether_human::broker::answer;
use tether_store::{Journal, NewQuestion};
use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::{Method, TelegramFault};
use tokio_util::sync::CancellationToken;

use crate::common::{telegram_broker, telegram_channel};

const CHAT: i64 = FakeTelegramServer::GROUP;
const LIMIT: Duration = Duration::from_secs(10);

struct Setup {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    ws: Workspace,
    registry: std::path::PathBuf,
    journal: Journal,
    server: FakeTelegramServer,
    broker: Broker,
}

async fn setup() -> Setup {
    let server = FakeTelegramServer::builder()
        .longpoll_timeout(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let reg = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    std::fs::create_dir_all(ws.state_dir()).unwrap();
    let (journal, broker) = telegram_broker(&server, CHAT, &ws, reg.path());
    Setup {
        registry: reg.path().to_path_buf(),
        _dirs: (dir, reg),
        ws,
        journal,
        server,
        broker,
    }
}

fn ask(options: &[&str]) -> NewQuestion {
    NewQuestion {
        question: "Merge the migration now?".into(),
        context: "all tests pass".into(),
        confidence: Some(20),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
        ..NewQuestion::default()
    }
}

/// The bot's latest message in the chat once `n` `sendMessage` requests were made.
async fn posted(server: &FakeTelegramServer, n: usize) -> i64 {
    server
        .wait_for_count(Method::SendMessage, n, LIMIT)
        .await
        .unwrap();
    tether_testkit::wait_until_async("the message stored", LIMIT, || {
        server.bot_messages(CHAT).last().map(|m| m.message_id)
    })
    .await
    .unwrap()
}

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
async fn faults_lose_and_double_nothing() {
    let s = setup().await;
    s.server.fault_at(
        Method::SendMessage,
        0,
        TelegramFault::RateLimited { retry_after: 0 },
    );
    s.server
        .fault_at(Method::GetUpdates, 0, TelegramFault::ServerError(502));
    s.server
        .fault_at(Method::GetUpdates, 1, TelegramFault::ConnectionReset);
    s.server
        .fault_at(Method::GetUpdates, 2, TelegramFault::Conflict);
    s.server
        .fault_at(Method::GetUpdates, 4, TelegramFault::DuplicateDelivery);
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), CancellationToken::new()).await });
    let question = posted(&s.server, 2).await;
    s.server
        .wait_for_count(Method::GetUpdates, 4, LIMIT)
        .await
        .unwrap();
    s.server.reply(&s.server.alice(), CHAT, question, "first");
    s.server.reply(&s.server.bob(), CHAT, question, "second");
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.text, "first");
    assert_eq!(
        s.server.bot_messages(CHAT).len(),
        1,
        "posted once despite the 429"
    );
}

#[tokio::test]
async fn two_brokers_on_one_bot_each_get_their_answer_with_one_poller() {
    let s = setup().await;
    let other_dir = tempfile::tempdir().unwrap();
    let other_ws = Workspace::at(other_dir.path());
    std::fs::create_dir_all(other_ws.state_dir()).unwrap();
    let (other_journal, other) = telegram_broker(&s.server, CHAT, &other_ws, &s.registry);
    let (b1, b2) = (s.broker.clone(), other.clone());
    let first = tokio::spawn(async move { b1.ask(ask(&[]), CancellationToken::new()).await });
    let q1 = posted(&s.server, 1).await;
    let second =
        tokio::spawn(async move { b2.ask(ask(&["A", "B"]), CancellationToken::new()).await });
    let q2 = posted(&s.server, 2).await;
    // Answer the second asker's question first: whoever polls must store it in its workspace.
    s.server.reply(&s.server.bob(), CHAT, q2, "B");
    let got2 = tokio::time::timeout(LIMIT, second)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((got2.text.as_str(), got2.choice), ("B", Some(1)));
    s.server.reply(&s.server.alice(), CHAT, q1, "go");
    let got1 = tokio::time::timeout(LIMIT, first)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got1.text, "go");
    assert_eq!(
        s.journal
            .store()
            .question(&got1.question_id)
            .unwrap()
            .answer
            .as_deref(),
        Some("go")
    );
    assert_eq!(
        other_journal
            .store()
            .question(&got2.question_id)
            .unwrap()
            .answer
            .as_deref(),
        Some("B")
    );
    assert_eq!(s.server.conflicts(), 0, "never two pollers at once");
    assert_eq!(s.server.bot_messages(CHAT).len(), 2);
}

#[tokio::test]
async fn a_reply_given_while_nobody_waits_reaches_the_resumed_wait_without_a_second_post() {
    let s = setup().await;
    let cancel = CancellationToken::new();
    let (b, c) = (s.broker.clone(), cancel.clone());
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), c).await });
    let question = posted(&s.server, 1).await;
    cancel.cancel();
    assert!(
        tokio::time::timeout(LIMIT, waiting)
            .await
            .unwrap()
            .unwrap()
            .is_err()
    );
    let id = s.journal.store().pending_questions().unwrap()[0].id.clone();
    s.server
        .reply(&s.server.alice(), CHAT, question, "while you were away");
    // A new process: its own journal on the same store.
    let (_journal, resumed) = telegram_broker(&s.server, CHAT, &s.ws, &s.registry);
    let got = tokio::time::timeout(LIMIT, resumed.wait(&id, CancellationToken::new()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.text, "while you were away");
    assert_eq!(s.server.bot_messages(CHAT).len(), 1, "never posted twice");
}

#[tokio::test]
async fn a_notice_is_posted_in_the_chat_with_the_command_to_go_on() {
    let s = setup().await;
    let (_journal, channel) = telegram_channel(&s.server, CHAT, &s.ws, &s.registry);
    let run: tether_store::RunId = "r-7k2m9x".parse().unwrap();
    let notice = tether_human::Notice {
        kind: tether_config::NoticeKind::Paused,
        run_id: run,
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
async fn when_a_lost_response_made_the_question_post_twice_the_first_copy_still_answers() {
    for press in [false, true] {
        let s = setup().await;
        s.server
            .fault_at(Method::SendMessage, 0, TelegramFault::ResetAfterHandling);
        let b = s.broker.clone();
        let waiting = tokio::spawn(async move {
            b.ask(ask(&["Merge now", "Wait"]), CancellationToken::new())
                .await
        });
        posted(&s.server, 2).await;
        let copies = s.server.bot_messages(CHAT);
        assert_eq!(copies.len(), 2, "the retry posted a second copy");
        let first = copies[0].clone();
        if press {
            let data = first.reply_markup.unwrap()["inline_keyboard"][1][0]["callback_data"]
                .as_str()
                .unwrap()
                .to_owned();
            s.server
                .press(&s.server.bob(), CHAT, first.message_id, &data);
        } else {
            s.server
                .reply(&s.server.alice(), CHAT, first.message_id, "Wait");
        }
        let got = tokio::time::timeout(LIMIT, waiting)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (got.text.as_str(), got.choice),
            ("Wait", Some(1)),
            "press: {press}"
        );
    }
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
        run_id: run.clone(),
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

#[tokio::test]
async fn an_expired_press_leaves_a_typed_answer_and_update_ids_may_jump() {
    let s = setup().await;
    let cancel = CancellationToken::new();
    let (b, c) = (s.broker.clone(), cancel.clone());
    let waiting = tokio::spawn(async move { b.ask(ask(&["Now", "Later"]), c).await });
    let question = posted(&s.server, 1).await;
    s.server
        .wait_for_count(Method::GetUpdates, 1, LIMIT)
        .await
        .unwrap();
    cancel.cancel();
    assert!(
        tokio::time::timeout(LIMIT, waiting)
            .await
            .unwrap()
            .unwrap()
            .is_err()
    );
    // Pressed while nothing polled, and the press expired before anything polled again.
    s.server.press(&s.server.alice(), CHAT, question, "tq:0:x");
    assert_eq!(s.server.expire_presses(), 1);
    s.server.jump_update_ids(1_000_000);
    s.server.reply(&s.server.alice(), CHAT, question, "Later");
    let id = s.journal.store().pending_questions().unwrap()[0].id.clone();
    let got = tokio::time::timeout(LIMIT, s.broker.wait(&id, CancellationToken::new()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((got.text.as_str(), got.choice), ("Later", Some(1)));
}

#[tokio::test]
async fn a_bot_removed_from_the_chat_leaves_the_other_channels_answering() {
    let s = setup().await;
    s.server
        .fault_at(Method::SendMessage, 0, TelegramFault::Forbidden);
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask(&[]), CancellationToken::new()).await });
    s.server
        .wait_for_count(Method::SendMessage, 1, LIMIT)
        .await
        .unwrap();
    let id = tether_testkit::wait_until_async("the question stored", LIMIT, || {
        s.journal
            .store()
            .pending_questions()
            .ok()?
            .into_iter()
            .next()
    })
    .await
    .unwrap()
    .id;
    answer(
        &s.journal.store(),
        &s.ws.state_dir(),
        &id,
        "fine",
        "cli",
        "carol",
    )
    .unwrap();
    let got = tokio::time::timeout(LIMIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((got.text.as_str(), got.channel.as_str()), ("fine", "cli"));
    assert_eq!(
        s.server.count(Method::SendMessage),
        1,
        "a 403 is not retried"
    );
    assert!(s.server.bot_messages(CHAT).is_empty());
}
