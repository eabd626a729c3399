//! The fake's Web API: `POST /api/<method>` with a Bearer token, arguments as JSON or form
//! fields, `{"ok":true,…}` or HTTP 200 `{"ok":false,"error":"…"}` back, 429 with `Retry-After`.
//! Every request is recorded (method and time, never the token) before faults are applied.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Form, FromRequest, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::Shared;
use super::fault::{SlackFault, SlackMethod};
use super::workspace::{Draft, page, ts_key};

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

fn ok(mut body: Value) -> Response {
    body["ok"] = json!(true);
    json(StatusCode::OK, &body)
}

fn error(code: &str) -> Response {
    json(StatusCode::OK, &json!({"ok": false, "error": code}))
}

fn json(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        )],
        body.to_string(),
    )
        .into_response()
}

fn connection_reset() -> Response {
    let error = std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "fake slack server: connection reset by fault injection",
    );
    let body = Body::from_stream(futures_util::stream::once(
        async move { Err::<Bytes, _>(error) },
    ));
    (StatusCode::OK, body).into_response()
}

async fn handle(State(s): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let Some(method) = path.strip_prefix("/api/").and_then(SlackMethod::of) else {
        return json(
            StatusCode::NOT_FOUND,
            &json!({"ok": false, "error": "unknown_method"}),
        );
    };
    s.record(method);
    let token = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let is_json = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let args = if is_json {
        match Bytes::from_request(request, &()).await {
            Ok(bytes) => serde_json::from_slice::<Map<String, Value>>(&bytes).ok(),
            Err(_) => None,
        }
    } else {
        Form::<Vec<(String, String)>>::from_request(request, &())
            .await
            .ok()
            .map(|Form(pairs)| {
                pairs
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect()
            })
    };
    let Some(args) = args else {
        return error("invalid_form_data");
    };
    match s.faults.take(method) {
        Some(SlackFault::RateLimited { retry_after_secs }) => {
            let mut response = json(
                StatusCode::TOO_MANY_REQUESTS,
                &json!({"ok": false, "error": "ratelimited"}),
            );
            if let Ok(value) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
            return response;
        }
        Some(SlackFault::ServerError(status)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            return (status, "<html><body>upstream went away</body></html>").into_response();
        }
        Some(SlackFault::ConnectionReset) => return connection_reset(),
        Some(SlackFault::Error(code)) => return error(&code),
        Some(SlackFault::ResetAfterHandling) => {
            let _ = respond(&s, method, token.as_deref(), &args);
            return connection_reset();
        }
        None => {}
    }
    respond(&s, method, token.as_deref(), &args)
}

fn respond(
    s: &Shared,
    method: SlackMethod,
    token: Option<&str>,
    args: &Map<String, Value>,
) -> Response {
    let expected = if method == SlackMethod::ConnectionsOpen {
        &s.app_token
    } else {
        &s.bot_token
    };
    match token {
        None => return error("not_authed"),
        Some(t) if t != expected => return error("invalid_auth"),
        Some(_) => {}
    }
    let arg = |name: &str| -> Option<String> {
        match args.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    match method {
        SlackMethod::AuthTest => ok(json!({
            "url": "https://fake.slack.test/", "team": "Fake", "user": "tether",
            "team_id": super::TEAM_ID, "user_id": super::BOT_USER, "bot_id": super::BOT_ID,
        })),
        SlackMethod::ConnectionsOpen => {
            let ticket = s.sockets.issue_ticket();
            ok(json!({"url": format!("ws://{}/link/?ticket={ticket}&app_id=A0FAKEAPP", s.ws_addr)}))
        }
        SlackMethod::PostMessage => post_message(s, args, &arg),
        SlackMethod::Update => update(s, &arg, args),
        SlackMethod::Replies => replies(s, &arg),
        SlackMethod::History => history(s, &arg),
        SlackMethod::UsersInfo => users_info(&arg),
    }
}

fn post_message(
    s: &Shared,
    args: &Map<String, Value>,
    arg: &dyn Fn(&str) -> Option<String>,
) -> Response {
    let Some(channel) = arg("channel") else {
        return error("channel_not_found");
    };
    let text = arg("text").unwrap_or_default();
    let blocks = match args.get("blocks") {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
        Some(value) => value.clone(),
        None => Value::Null,
    };
    if text.is_empty() && blocks.is_null() {
        return error("no_text");
    }
    let metadata = match args.get("metadata") {
        Some(Value::String(text)) => serde_json::from_str(text).ok(),
        Some(value @ Value::Object(_)) => Some(value.clone()),
        _ => None,
    };
    let thread = arg("thread_ts");
    let stored = {
        let mut ws = s.workspace();
        if !ws.channel_exists(&channel) {
            return error("channel_not_found");
        }
        if let Some(thread) = &thread
            && ws.thread(&channel, thread).is_none()
        {
            return error("thread_not_found");
        }
        ws.post(Draft {
            channel: &channel,
            user: super::BOT_USER,
            bot_id: Some(super::BOT_ID),
            text: &text,
            thread_ts: thread.as_deref(),
            blocks,
            metadata,
        })
    };
    s.emit_message(&stored);
    ok(json!({"channel": channel, "ts": stored.ts, "message": stored.to_json()}))
}

fn update(s: &Shared, arg: &dyn Fn(&str) -> Option<String>, args: &Map<String, Value>) -> Response {
    let (Some(channel), Some(ts)) = (arg("channel"), arg("ts")) else {
        return error("message_not_found");
    };
    let mut ws = s.workspace();
    let Some(message) = ws.find_mut(&channel, &ts) else {
        return error("message_not_found");
    };
    if message.bot_id.as_deref() != Some(super::BOT_ID) {
        return error("cant_update_message");
    }
    if let Some(text) = arg("text") {
        message.text = text;
    }
    match args.get("blocks") {
        Some(Value::String(text)) => {
            message.blocks = serde_json::from_str(text).unwrap_or(Value::Null)
        }
        Some(value) => message.blocks = value.clone(),
        None => {}
    }
    message.edits += 1;
    let text = message.text.clone();
    ok(json!({"channel": channel, "ts": ts, "text": text}))
}

fn replies(s: &Shared, arg: &dyn Fn(&str) -> Option<String>) -> Response {
    let (Some(channel), Some(ts)) = (arg("channel"), arg("ts")) else {
        return error("invalid_arguments");
    };
    let with_metadata = arg("include_all_metadata").as_deref() == Some("true");
    let inclusive = arg("inclusive").as_deref() == Some("true");
    let oldest = arg("oldest").map(|o| ts_key(&o));
    let limit = s.page_limit(arg("limit").and_then(|l| l.parse().ok()).unwrap_or(1000));
    let ws = s.workspace();
    if !ws.channel_exists(&channel) {
        return error("channel_not_found");
    }
    let Some(thread) = ws.thread(&channel, &ts) else {
        return error("thread_not_found");
    };
    // The parent comes first whatever `oldest` says; later pages omit it.
    let messages: Vec<Value> = thread
        .iter()
        .enumerate()
        .filter(|(i, m)| {
            *i == 0
                || oldest.is_none_or(|o| {
                    let k = ts_key(&m.ts);
                    k > o || (inclusive && k == o)
                })
        })
        .map(|(_, m)| shown(m.to_json(), with_metadata))
        .collect();
    let cursor = arg("cursor");
    let (messages, next) = page(&messages, cursor.as_deref(), limit);
    ok(json!({
        "messages": messages,
        "has_more": next.is_some(),
        "response_metadata": {"next_cursor": next.unwrap_or_default()},
    }))
}

fn history(s: &Shared, arg: &dyn Fn(&str) -> Option<String>) -> Response {
    let Some(channel) = arg("channel") else {
        return error("channel_not_found");
    };
    let with_metadata = arg("include_all_metadata").as_deref() == Some("true");
    let oldest = arg("oldest").map(|o| ts_key(&o));
    let limit = s.page_limit(arg("limit").and_then(|l| l.parse().ok()).unwrap_or(100));
    let ws = s.workspace();
    if !ws.channel_exists(&channel) {
        return error("channel_not_found");
    }
    let messages: Vec<Value> = ws
        .history(&channel)
        .into_iter()
        .filter(|m| oldest.is_none_or(|o| ts_key(&m.ts) > o))
        .map(|m| shown(m.to_json(), with_metadata))
        .collect();
    let (messages, next) = page(&messages, arg("cursor").as_deref(), limit);
    ok(json!({
        "messages": messages,
        "has_more": next.is_some(),
        "response_metadata": {"next_cursor": next.unwrap_or_default()},
    }))
}

fn shown(mut message: Value, with_metadata: bool) -> Value {
    if !with_metadata && let Some(m) = message.as_object_mut() {
        m.remove("metadata");
    }
    message
}

/// The fake's people: the human (display name "Ada") and the bot.
fn users_info(arg: &dyn Fn(&str) -> Option<String>) -> Response {
    let user = arg("user").unwrap_or_default();
    let (name, real, display) = match user.as_str() {
        super::FakeSlackServer::HUMAN => ("ada", "Ada Lovelace", "Ada"),
        super::BOT_USER => ("tether", "tether", ""),
        _ => return error("user_not_found"),
    };
    ok(
        json!({"user": {"id": user, "team_id": super::TEAM_ID, "name": name,
        "real_name": real, "is_bot": user == super::BOT_USER,
        "profile": {"display_name": display, "real_name": real}}}),
    )
}
