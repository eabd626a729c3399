//! The fake Telegram Bot API's own contract, over raw HTTP: the reply shapes, the confirming
//! offset, the 409 of a second poller and the faults, so tether-telegram's client tests test
//! against something faithful.

use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::{Method, TelegramFault};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const GROUP: i64 = FakeTelegramServer::GROUP;

async fn server(longpoll_ms: u64) -> FakeTelegramServer {
    FakeTelegramServer::builder()
        .longpoll_timeout(Duration::from_millis(longpoll_ms))
        .start()
        .await
        .unwrap()
}

struct Answer {
    status: u16,
    headers: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// One request over a fresh connection, `body` as JSON (`content_type` says otherwise).
async fn raw(server: &FakeTelegramServer, path: &str, content_type: &str, body: &str) -> Answer {
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes).await;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        headers: head.to_lowercase(),
        body: body.to_owned(),
    }
}

async fn call(server: &FakeTelegramServer, method: &str, params: Value) -> Answer {
    let path = format!("/bot{}/{method}", server.token());
    raw(server, &path, "application/json", &params.to_string()).await
}

#[tokio::test]
async fn errors_have_the_bot_api_shapes() {
    let server = server(20).await;
    let denied = raw(&server, "/bot1:wrong/getMe", "application/json", "").await;
    assert_eq!(denied.status, 401);
    assert_eq!(
        denied.json(),
        json!({"ok": false, "error_code": 401, "description": "Unauthorized"})
    );
    let missing = call(&server, "sendMessage", json!({"chat_id": 42, "text": "x"})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["description"], "Bad Request: chat not found");

    server.fault_next(Method::GetMe, TelegramFault::RateLimited { retry_after: 7 });
    let limited = call(&server, "getMe", json!({})).await;
    assert_eq!(limited.status, 429);
    assert_eq!(limited.json()["parameters"]["retry_after"], 7);
    assert!(
        limited.headers.contains("retry-after: 7"),
        "{}",
        limited.headers
    );

    let me = call(&server, "GETME", json!({})).await;
    assert_eq!(me.json()["result"]["id"], 7001);
    assert_eq!(me.json()["result"]["is_bot"], true);
}

#[tokio::test]
async fn a_reply_is_queued_until_an_offset_confirms_it() {
    let server = server(20).await;
    let sent = call(
        &server,
        "sendMessage",
        json!({"chat_id": GROUP, "text": "Ship it?",
               "reply_markup": {"inline_keyboard": [[{"text": "Yes", "callback_data": "q:0"}]]}}),
    )
    .await
    .json();
    let question = sent["result"]["message_id"].as_i64().unwrap();
    assert_eq!(
        sent["result"]["reply_markup"]["inline_keyboard"][0][0]["text"],
        "Yes"
    );

    server.reply(&server.alice(), GROUP, question, "yes");
    let first = call(&server, "getUpdates", json!({"timeout": 1}))
        .await
        .json();
    let update = &first["result"][0];
    assert_eq!(
        update["message"]["reply_to_message"]["message_id"],
        question
    );
    assert_eq!(update["message"]["from"]["first_name"], "Alice");
    // Not confirmed yet: delivered again.
    let again = call(&server, "getUpdates", json!({"timeout": 0}))
        .await
        .json();
    assert_eq!(again["result"][0]["update_id"], update["update_id"]);
    let next = update["update_id"].as_i64().unwrap() + 1;
    let confirmed = call(&server, "getUpdates", json!({"offset": next, "timeout": 0}))
        .await
        .json();
    assert_eq!(confirmed["result"], json!([]));
    assert_eq!(server.unconfirmed(), 0);
}

#[tokio::test]
async fn a_long_poll_waits_for_a_reply_and_a_newer_poll_ends_it_with_409() {
    let server = server(5_000).await;
    let first = tokio::spawn({
        let path = format!("/bot{}/getUpdates", server.token());
        let addr = server.addr();
        async move {
            let body = r#"{"timeout": 30}"#;
            let request = format!(
                "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes).await;
            String::from_utf8_lossy(&bytes).into_owned()
        }
    });
    server
        .wait_for_count(Method::GetUpdates, 1, Duration::from_secs(5))
        .await
        .unwrap();
    let second = tokio::spawn({
        let path = format!("/bot{}/getUpdates", server.token());
        let addr = server.addr();
        async move {
            let body = r#"{"timeout": 30}"#;
            let request = format!(
                "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes).await;
            String::from_utf8_lossy(&bytes).into_owned()
        }
    });
    let ended = first.await.unwrap();
    assert!(ended.starts_with("HTTP/1.1 409"), "{ended}");
    assert!(ended.contains("terminated by other getUpdates request"));
    server.post(&server.bob(), GROUP, None, "hello");
    let woke = second.await.unwrap();
    assert!(woke.starts_with("HTTP/1.1 200"), "{woke}");
    assert!(woke.contains("\"hello\""), "{woke}");
    assert_eq!(server.conflicts(), 1);
}

#[tokio::test]
async fn topics_buttons_and_forms_behave_as_documented() {
    let server = server(20).await;
    let topic = call(
        &server,
        "createForumTopic",
        json!({"chat_id": FakeTelegramServer::FORUM, "name": "Q1"}),
    )
    .await
    .json();
    let thread = topic["result"]["message_thread_id"].as_i64().unwrap();
    let no_forum = call(
        &server,
        "createForumTopic",
        json!({"chat_id": GROUP, "name": "Q1"}),
    )
    .await;
    assert_eq!(no_forum.status, 400);

    // Form-encoded, the keyboard as JSON text.
    let form = format!(
        "chat_id={}&message_thread_id={thread}&text=Pick&reply_markup=%7B%22inline_keyboard%22%3A%5B%5B%7B%22text%22%3A%22A%22%2C%22callback_data%22%3A%22q%3A0%22%7D%5D%5D%7D",
        FakeTelegramServer::FORUM
    );
    let path = format!("/bot{}/sendMessage", server.token());
    let sent = raw(&server, &path, "application/x-www-form-urlencoded", &form).await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let message = sent.json()["result"]["message_id"].as_i64().unwrap();

    let press = server.press(&server.alice(), FakeTelegramServer::FORUM, message, "q:0");
    let updates = call(&server, "getUpdates", json!({})).await.json();
    let kinds: Vec<bool> = updates["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.get("callback_query").is_some())
        .collect();
    // The topic's service message first, then the press.
    assert_eq!(kinds, [false, true]);
    assert!(updates["result"][0]["message"]["forum_topic_created"].is_object());
    let ok = call(
        &server,
        "answerCallbackQuery",
        json!({"callback_query_id": press}),
    )
    .await;
    assert_eq!(ok.status, 200);
    assert!(server.presses()[0].answered);

    let edit = json!({"chat_id": FakeTelegramServer::FORUM, "message_id": message});
    assert_eq!(
        call(&server, "editMessageReplyMarkup", edit.clone())
            .await
            .status,
        200
    );
    let same = call(&server, "editMessageReplyMarkup", edit).await;
    assert_eq!(same.status, 400);
    assert!(
        same.json()["description"]
            .as_str()
            .unwrap()
            .contains("message is not modified")
    );
}

#[tokio::test]
async fn duplicate_delivery_and_resets_on_demand() {
    let server = server(20).await;
    server.post(&server.alice(), GROUP, None, "one");
    server.fault_next(Method::GetUpdates, TelegramFault::DuplicateDelivery);
    let doubled = call(&server, "getUpdates", json!({})).await.json();
    assert_eq!(doubled["result"].as_array().unwrap().len(), 2);
    server.fault_next(Method::SendMessage, TelegramFault::ResetAfterHandling);
    let lost = call(
        &server,
        "sendMessage",
        json!({"chat_id": GROUP, "text": "hi"}),
    )
    .await;
    assert_eq!(lost.status, 0, "no response: {}", lost.body);
    assert_eq!(server.bot_messages(GROUP).len(), 1, "the send took effect");
}
