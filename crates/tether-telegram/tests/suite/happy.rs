//! A plain question answered by a reply, a choice answered by a button and by a typed number;
//! the update is confirmed after the answer is recorded and the card is closed.

use tether_telegram::callback_data;
use tether_testkit::telegram_server::{FakeTelegramServer, Method};

use super::common::{LIMIT, LONGPOLL, Recorder, ask, client, serve, server};

const GROUP: i64 = FakeTelegramServer::GROUP;

#[tokio::test]
async fn a_reply_to_the_question_answers_it_and_is_confirmed() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    let post = ask(&client, "q-plain", "/ws", "Deploy now?", &[]).await;
    let question = server.bot_messages(GROUP);
    assert_eq!(question.len(), 1);
    assert!(question[0].text.contains("Deploy now?"));
    assert!(
        question[0].reply_markup.is_none(),
        "no buttons without options"
    );

    let recorder = Recorder::new();
    let (stop, task) = serve(&client, &recorder);
    server.reply(&server.alice(), GROUP, post.message_id, "  yes, go  ");
    let reply = recorder.wait("q-plain", LIMIT).await;
    assert_eq!((reply.text.as_str(), reply.choice), ("yes, go", None));
    assert_eq!(reply.responder, "Alice");
    tether_testkit::wait_until_async("the update confirmed", LIMIT, || {
        (server.unconfirmed() == 0).then_some(())
    })
    .await
    .unwrap();
    assert!(client.registry().find(GROUP, post.message_id).is_none());
    stop.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(server.count(Method::SendMessage), 1, "posted once");
}

#[tokio::test]
async fn a_button_press_answers_with_its_choice_and_closes_the_card() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    let options = vec!["Keep".to_owned(), "Drop".to_owned()];
    let post = ask(&client, "q-choice", "/ws", "The flaky test?", &options).await;
    let card = &server.bot_messages(GROUP)[0];
    let keyboard = card.reply_markup.as_ref().expect("a keyboard");
    assert_eq!(keyboard["inline_keyboard"][1][0]["text"], "Drop");
    assert_eq!(
        keyboard["inline_keyboard"][1][0]["callback_data"],
        callback_data(1, "q-choice")
    );

    let recorder = Recorder::new();
    let (stop, task) = serve(&client, &recorder);
    server.press(
        &server.bob(),
        GROUP,
        post.message_id,
        &callback_data(1, "q-choice"),
    );
    let reply = recorder.wait("q-choice", LIMIT).await;
    assert_eq!((reply.text.as_str(), reply.choice), ("Drop", Some(1)));
    assert_eq!(reply.responder, "Bob");
    tether_testkit::wait_until_async("the press answered, the keyboard gone", LIMIT, || {
        let answered = server.presses().iter().all(|p| p.answered);
        let closed = server.bot_messages(GROUP)[0].reply_markup.is_none();
        (answered && closed).then_some(())
    })
    .await
    .unwrap();
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_typed_number_goes_as_text_for_the_store_to_read() {
    let server = server(LONGPOLL).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&server, dir.path(), LONGPOLL);
    let options = vec!["A".to_owned(), "B".to_owned()];
    let post = ask(&client, "q-typed", "/ws", "Which?", &options).await;
    let recorder = Recorder::new();
    let (stop, task) = serve(&client, &recorder);
    server.reply(&server.alice(), GROUP, post.message_id, "2");
    let reply = recorder.wait("q-typed", LIMIT).await;
    assert_eq!((reply.text.as_str(), reply.choice), ("2", None));
    stop.cancel();
    task.await.unwrap().unwrap();
}
