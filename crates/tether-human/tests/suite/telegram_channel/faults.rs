//! Telegram going wrong: faults on every method, two brokers on one bot, a wait cancelled and
//! resumed, a question posted twice by a retried send, an expired press, a 403 — nothing lost,
//! nothing doubled.

use tether_config::Workspace;
use tether_human::broker::answer;
use tether_testkit::telegram_server::{Method, TelegramFault};
use tokio_util::sync::CancellationToken;

use super::{CHAT, LIMIT, ask, posted, setup};
use crate::common::telegram_broker;

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
