//! The fake Zulip server's own contract, over raw HTTP: the shapes and error codes of the
//! reference, so tether-zulip's client tests test against something faithful.

use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::FakeZulipServer;
use tether_testkit::zulip_server::{Endpoint, TopicMatch, ZulipFault};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn server(longpoll_ms: u64) -> FakeZulipServer {
    FakeZulipServer::builder()
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

fn basic(email: &str, key: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("{email}:{key}").into_bytes();
    let mut out = String::new();
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    format!("Basic {out}")
}

/// One HTTP/1.1 request over a fresh connection; `form` goes in the body, or in the query for GET.
async fn call(
    server: &FakeZulipServer,
    method: &str,
    path: &str,
    form: &[(&str, &str)],
    key: &str,
) -> Answer {
    let encoded: String = form
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let (target, body) = if method == "GET" {
        (format!("{path}?{encoded}"), String::new())
    } else {
        (path.to_owned(), encoded)
    };
    let request = format!(
        "{method} {target} HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        basic(server.bot_email(), key),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw).await;
    let text = String::from_utf8_lossy(&raw).into_owned();
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

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn errors_have_the_reference_shapes() {
    let server = server(20).await;
    let key = server.api_key().to_owned();

    let denied = call(&server, "GET", "/api/v1/users/me", &[], "bad").await;
    assert_eq!(denied.status, 401);
    assert_eq!(denied.json()["code"], "INVALID_API_KEY");
    assert_eq!(denied.json()["result"], "error");

    server.fault_at(
        Endpoint::UsersMe,
        1,
        ZulipFault::RateLimited {
            retry_after: 28.706807374954224,
        },
    );
    let limited = call(&server, "GET", "/api/v1/users/me", &[], &key).await;
    assert_eq!(limited.status, 429);
    assert_eq!(
        limited.json(),
        json!({"code": "RATE_LIMIT_HIT", "msg": "API usage exceeded rate limit", "result": "error", "retry-after": 28.706807374954224})
    );
    assert!(
        limited.headers.contains("retry-after: 28.706807374954224"),
        "{}",
        limited.headers
    );

    let gone = call(
        &server,
        "GET",
        "/api/v1/events",
        &[("queue_id", "q-1"), ("last_event_id", "-1")],
        &key,
    )
    .await;
    assert_eq!(gone.status, 400);
    assert_eq!(
        gone.json(),
        json!({"code": "BAD_EVENT_QUEUE_ID", "msg": "Bad event queue ID: q-1", "queue_id": "q-1", "result": "error"})
    );

    let bad = call(
        &server,
        "POST",
        "/api/v1/register",
        &[("narrow", r#"[["search","x"]]"#)],
        &key,
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["msg"], "Operator search not supported.");

    let missing = call(
        &server,
        "POST",
        "/api/v1/messages",
        &[
            ("type", "stream"),
            ("to", "nope"),
            ("topic", "t"),
            ("content", "c"),
        ],
        &key,
    )
    .await;
    assert_eq!(missing.json()["code"], "STREAM_DOES_NOT_EXIST");
    assert_eq!(missing.json()["stream"], "nope");
}

#[tokio::test]
async fn long_polls_end_with_a_heartbeat_after_the_timeout() {
    let server = server(100).await;
    let key = server.api_key().to_owned();
    let registered = call(
        &server,
        "POST",
        "/api/v1/register",
        &[("event_types", r#"["message"]"#)],
        &key,
    )
    .await;
    let queue_id = registered.json()["queue_id"].as_str().unwrap().to_owned();
    let started = std::time::Instant::now();
    let polled = call(
        &server,
        "GET",
        "/api/v1/events",
        &[("queue_id", &queue_id), ("last_event_id", "-1")],
        &key,
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!(
        polled.json()["events"],
        json!([{"type": "heartbeat", "id": 0}])
    );
    assert_eq!(polled.json()["result"], "success");
}

#[tokio::test]
async fn narrows_match_as_configured() {
    let server = server(20).await;
    let key = server.api_key().to_owned();
    let register = |topic: &'static str| {
        let server = &server;
        let key = key.clone();
        async move {
            let narrow = json!([["stream", "tether"], ["topic", topic]]).to_string();
            let answer = call(
                server,
                "POST",
                "/api/v1/register",
                &[("narrow", &narrow)],
                &key,
            )
            .await;
            answer.json()["queue_id"].as_str().unwrap().to_owned()
        }
    };
    let poll = |queue: String| {
        let server = &server;
        let key = key.clone();
        async move {
            let answer = call(
                server,
                "GET",
                "/api/v1/events",
                &[
                    ("queue_id", &queue),
                    ("last_event_id", "-1"),
                    ("dont_block", "true"),
                ],
                &key,
            )
            .await;
            answer.json()["events"].as_array().unwrap().len()
        }
    };
    let queue = register("deploy").await;
    // Released servers: the whole topic, in any case.
    server.post_as_human("Deploy staging", "word");
    server.post_as_human("DEPLOY", "case");
    // Current main: also any word of the topic.
    server.set_topic_match(TopicMatch::WordMatch);
    server.post_as_human("deploy now", "word, loosely");
    server.post_as_human("redeploy", "no word");
    assert_eq!(poll(queue).await, 2);
}

#[tokio::test]
async fn get_messages_renders_markdown_unless_told_not_to_and_topics_are_truncated() {
    let server = server(20).await;
    let key = server.api_key().to_owned();
    let long_topic = "t".repeat(70);
    let sent = call(
        &server,
        "POST",
        "/api/v1/messages",
        &[
            ("type", "stream"),
            ("to", "tether"),
            ("topic", &long_topic),
            ("content", "\n\n*hi*  \n"),
        ],
        &key,
    )
    .await;
    assert!(sent.json()["id"].as_u64().is_some());
    let stored = &server.messages()[0];
    assert_eq!(stored.topic, format!("{}...", "t".repeat(57)));
    assert_eq!(stored.content, "*hi*");
    let narrow = json!([{"operator": "channel", "operand": "tether"}]).to_string();
    let html = call(
        &server,
        "GET",
        "/api/v1/messages",
        &[
            ("anchor", "newest"),
            ("num_before", "5"),
            ("num_after", "0"),
            ("narrow", &narrow),
        ],
        &key,
    )
    .await;
    assert_eq!(html.json()["messages"][0]["content"], "<p>*hi*</p>");
    assert_eq!(html.json()["messages"][0]["subject"], stored.topic.as_str());
    let raw = call(
        &server,
        "GET",
        "/api/v1/messages",
        &[
            ("anchor", "newest"),
            ("num_before", "5"),
            ("num_after", "0"),
            ("narrow", &narrow),
            ("apply_markdown", "false"),
        ],
        &key,
    )
    .await;
    assert_eq!(raw.json()["messages"][0]["content"], "*hi*");
    assert_eq!(raw.json()["found_newest"], true);
}
