//! The HTTP side of the fake Bot API: `/bot<token>/<method>` with parameters from the query, a
//! JSON body or a form (objects such as `reply_markup` as JSON text), `{"ok":true,"result":…}`
//! or `{"ok":false,"error_code":…,"description":…}` with the HTTP status equal to the code, and
//! the planned faults.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Path, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::state::{Press, StoredMessage};
use super::{Method, Shared, TelegramFault};

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/{token}/{method}", axum::routing::any(handle))
        .with_state(shared)
}

/// A request's parameters, whatever way they came.
pub(super) struct Params(Map<String, Value>);

impl Params {
    fn i64(&self, name: &str) -> Option<i64> {
        match self.0.get(name)? {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    fn str(&self, name: &str) -> Option<String> {
        match self.0.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    fn object(&self, name: &str) -> Option<Value> {
        match self.0.get(name)? {
            Value::String(s) => serde_json::from_str(s).ok(),
            Value::Null => None,
            other => Some(other.clone()),
        }
    }
}

async fn handle(
    axum::extract::State(s): axum::extract::State<Arc<Shared>>,
    Path((token, method)): Path<(String, String)>,
    request: Request,
) -> Response {
    let Some(method) = Method::parse(&method) else {
        return error(404, "Not Found");
    };
    let index = s.count(method);
    if token.strip_prefix("bot") != Some(s.token.as_str()) {
        return error(401, "Unauthorized");
    }
    let Ok(params) = params(request).await else {
        return error(400, "Bad Request: can't parse request body");
    };
    let fault = s.fault(method, index);
    match fault {
        Some(TelegramFault::RateLimited { retry_after }) => return rate_limited(retry_after),
        Some(TelegramFault::ServerError(status)) => return error(status, "Bad Gateway"),
        Some(TelegramFault::ConnectionReset) => return connection_reset(),
        Some(TelegramFault::Conflict) => return conflict(),
        Some(TelegramFault::Unauthorized) => return error(401, "Unauthorized"),
        Some(TelegramFault::Forbidden) => {
            return error(403, "Forbidden: bot was kicked from the supergroup chat");
        }
        Some(TelegramFault::ResetAfterHandling | TelegramFault::DuplicateDelivery) | None => {}
    }
    let duplicate = fault == Some(TelegramFault::DuplicateDelivery);
    let answer = match method {
        Method::GetMe => Ok(s.world().bot.json()),
        Method::GetChat => get_chat(&s, &params),
        Method::DeleteWebhook => Ok(json!(true)),
        Method::SendMessage => send_message(&s, &params),
        Method::GetUpdates => get_updates(&s, &params, duplicate).await,
        Method::AnswerCallbackQuery => answer_callback(&s, &params),
        Method::EditMessageReplyMarkup => edit_markup(&s, &params),
        Method::CreateForumTopic => create_topic(&s, &params),
    };
    if fault == Some(TelegramFault::ResetAfterHandling) {
        return connection_reset();
    }
    match answer {
        Ok(result) => (
            StatusCode::OK,
            axum::Json(json!({"ok": true, "result": result})),
        )
            .into_response(),
        Err(failure) => error(failure.code, &failure.description),
    }
}

async fn params(request: Request) -> Result<Params, ()> {
    let mut map = Map::new();
    if let Some(query) = request.uri().query() {
        let uri = format!("/?{query}")
            .parse::<axum::http::Uri>()
            .map_err(|_| ())?;
        let axum::extract::Query(q) =
            axum::extract::Query::<HashMap<String, String>>::try_from_uri(&uri).map_err(|_| ())?;
        map.extend(q.into_iter().map(|(k, v)| (k, Value::String(v))));
    }
    let form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if form {
        let axum::Form(f) = axum::Form::<HashMap<String, String>>::from_request(request, &())
            .await
            .map_err(|_| ())?;
        map.extend(f.into_iter().map(|(k, v)| (k, Value::String(v))));
    } else {
        let body = Bytes::from_request(request, &()).await.map_err(|_| ())?;
        if !body.iter().all(u8::is_ascii_whitespace) {
            let Value::Object(o) = serde_json::from_slice(&body).map_err(|_| ())? else {
                return Err(());
            };
            map.extend(o);
        }
    }
    Ok(Params(map))
}

fn error(code: u16, description: &str) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({"ok": false, "error_code": code, "description": description});
    (status, axum::Json(body)).into_response()
}

fn rate_limited(retry_after: u64) -> Response {
    let body = json!({
        "ok": false,
        "error_code": 429,
        "description": format!("Too Many Requests: retry after {retry_after}"),
        "parameters": {"retry_after": retry_after},
    });
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, retry_after.to_string())],
        axum::Json(body),
    )
        .into_response()
}

const CONFLICT: &str = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";

fn conflict() -> Response {
    error(409, CONFLICT)
}

/// A method's `ok: false` answer.
struct Failure {
    code: u16,
    description: String,
}

impl Failure {
    fn new(code: u16, description: &str) -> Self {
        Failure {
            code,
            description: description.to_owned(),
        }
    }
}

/// A response whose body fails at once: hyper drops the connection without an answer.
fn connection_reset() -> Response {
    let error = std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "fake telegram server: connection reset by fault injection",
    );
    let body = Body::from_stream(futures_util::stream::once(
        async move { Err::<Bytes, _>(error) },
    ));
    (StatusCode::OK, body).into_response()
}

fn chat_of(s: &Shared, p: &Params) -> Result<i64, Failure> {
    let id = p
        .i64("chat_id")
        .ok_or_else(|| Failure::new(400, "Bad Request: chat_id is empty"))?;
    if s.world().chats.contains_key(&id) {
        Ok(id)
    } else {
        Err(Failure::new(400, "Bad Request: chat not found"))
    }
}

fn get_chat(s: &Shared, p: &Params) -> Result<Value, Failure> {
    let chat = chat_of(s, p)?;
    Ok(s.world().chat_json(chat))
}

fn send_message(s: &Shared, p: &Params) -> Result<Value, Failure> {
    let chat = chat_of(s, p)?;
    let text = p.str("text").unwrap_or_default();
    if text.is_empty() || text.chars().count() > 4096 {
        return Err(Failure::new(400, "Bad Request: message text is empty"));
    }
    let reply_to = p
        .object("reply_parameters")
        .and_then(|r| r.get("message_id").and_then(Value::as_i64))
        .or_else(|| p.i64("reply_to_message_id"));
    let markup = p.object("reply_markup");
    if let Some(rows) = markup.as_ref().and_then(|m| m.get("inline_keyboard")) {
        let too_long = rows
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| r.as_array().into_iter().flatten())
            .filter_map(|b| b.get("callback_data").and_then(Value::as_str))
            .any(|d| d.is_empty() || d.len() > 64);
        if too_long {
            return Err(Failure::new(400, "Bad Request: BUTTON_DATA_INVALID"));
        }
    }
    let mut w = s.world();
    let thread_id = p.i64("message_thread_id");
    if let Some(thread) = thread_id
        && !w.topics.iter().any(|(c, t, _)| *c == chat && *t == thread)
    {
        return Err(Failure::new(400, "Bad Request: message thread not found"));
    }
    let bot = w.bot.clone();
    let stored = w.store(StoredMessage {
        chat_id: chat,
        message_id: 0,
        from: bot,
        text,
        thread_id,
        reply_to,
        reply_markup: markup,
    });
    let json = w.message_json(&stored);
    drop(w);
    s.bump();
    Ok(json)
}

async fn get_updates(s: &Shared, p: &Params, duplicate: bool) -> Result<Value, Failure> {
    let offset = p.i64("offset");
    let limit = p.i64("limit").unwrap_or(100).clamp(1, 100) as usize;
    let timeout = Duration::from_secs(p.i64("timeout").unwrap_or(0).clamp(0, 50) as u64).min(
        *s.longpoll
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let generation = {
        let mut w = s.world();
        w.poll_generation += 1;
        if let Some(offset) = offset {
            w.updates.retain(|(id, _)| *id >= offset);
        }
        w.poll_generation
    };
    s.bump();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut changed = s.changed.subscribe();
    loop {
        {
            let mut w = s.world();
            if w.poll_generation != generation {
                w.conflicts += 1;
                return Err(Failure::new(409, CONFLICT));
            }
            let ready: Vec<Value> = w
                .updates
                .iter()
                .filter(|(id, _)| offset.is_none_or(|o| *id >= o))
                .take(limit)
                .map(|(_, u)| u.clone())
                .collect();
            if !ready.is_empty() || tokio::time::Instant::now() >= deadline {
                let ready = if duplicate {
                    ready.iter().flat_map(|u| [u.clone(), u.clone()]).collect()
                } else {
                    ready
                };
                return Ok(Value::Array(ready));
            }
        }
        tokio::select! {
            _ = changed.changed() => {}
            () = tokio::time::sleep_until(deadline) => {}
            () = s.shutdown.cancelled() => return Ok(json!([])),
        }
    }
}

fn answer_callback(s: &Shared, p: &Params) -> Result<Value, Failure> {
    let id = p.str("callback_query_id").unwrap_or_default();
    let mut w = s.world();
    let Some(press) = w.presses.iter_mut().find(|q: &&mut Press| q.id == id) else {
        return Err(Failure::new(
            400,
            "Bad Request: query is too old and response timeout expired or query ID is invalid",
        ));
    };
    press.answered = true;
    Ok(json!(true))
}

fn edit_markup(s: &Shared, p: &Params) -> Result<Value, Failure> {
    let chat = chat_of(s, p)?;
    let id = p.i64("message_id").unwrap_or(0);
    let markup = p.object("reply_markup");
    let mut w = s.world();
    let Some(index) = w
        .messages
        .iter()
        .position(|m| m.chat_id == chat && m.message_id == id)
    else {
        return Err(Failure::new(400, "Bad Request: message to edit not found"));
    };
    if w.messages[index].reply_markup == markup {
        return Err(Failure::new(
            400,
            "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
        ));
    }
    w.messages[index].reply_markup = markup;
    let message = w.messages[index].clone();
    Ok(w.message_json(&message))
}

fn create_topic(s: &Shared, p: &Params) -> Result<Value, Failure> {
    let chat = chat_of(s, p)?;
    let name = p.str("name").unwrap_or_default();
    if name.is_empty() || name.chars().count() > 128 {
        return Err(Failure::new(400, "Bad Request: TOPIC_NAME_INVALID"));
    }
    let mut w = s.world();
    if !w.chats.get(&chat).is_some_and(|c| c.is_forum) {
        return Err(Failure::new(400, "Bad Request: the chat is not a forum"));
    }
    let thread = w.next_topic;
    w.next_topic += 1;
    w.topics.push((chat, thread, name.clone()));
    // Telegram delivers the service message of the bot's own topic creation.
    let bot = w.bot.clone();
    let service = w.store(StoredMessage {
        chat_id: chat,
        message_id: 0,
        from: bot,
        text: String::new(),
        thread_id: Some(thread),
        reply_to: None,
        reply_markup: None,
    });
    let mut message = w.message_json(&service);
    if let Some(m) = message.as_object_mut() {
        m.remove("text");
    }
    message["forum_topic_created"] = json!({"name": name, "icon_color": 7322096});
    w.enqueue("message", message);
    drop(w);
    s.bump();
    Ok(json!({"message_thread_id": thread, "name": name, "icon_color": 7322096}))
}
