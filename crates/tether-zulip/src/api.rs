//! The low level: one HTTP request per call, as Zulip's REST API documents it (basic auth
//! with the bot's email and key, `/api/v1/…` paths).
//!
//! Bodies are form-encoded with JSON text inside the fields that are not strings (`narrow`,
//! `event_types`, booleans, integers); GET parameters go in the query. Every call authenticates
//! with HTTP Basic (`email:api_key`) in a header reqwest marks sensitive, so the key can appear
//! neither in a URL, nor in an error, nor in a log line.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tether_http::ClientSpec;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use tether_config::Secret;

use crate::error::ZulipError;
use crate::settings::ZulipSettings;
use crate::wire::{BotIdentity, ErrorBody, Event, Message, MessageId};

/// Timeouts of the HTTP layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiOptions {
    /// Connecting to the server.
    pub connect_timeout: Duration,
    /// A whole ordinary request (everything but the long-poll).
    pub request_timeout: Duration,
    /// A whole long-poll (`GET /events`). Zulip answers within its
    /// `event_queue_longpoll_timeout_seconds` (90 s by default) with a heartbeat, so this is a
    /// margin above that; when it fires the poll simply counts as empty.
    pub poll_timeout: Duration,
}

impl Default for ApiOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            poll_timeout: Duration::from_secs(120),
        }
    }
}

/// A freshly registered event queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredQueue {
    /// The queue id.
    pub queue_id: String,
    /// The id to acknowledge in the first poll (often -1).
    pub last_event_id: i64,
    /// The server's feature level, when it said.
    pub feature_level: Option<u64>,
    /// The newest message id in the realm when the queue was registered (sent when `message`
    /// events are fetched); anything newer was posted after the queue existed.
    pub max_message_id: Option<MessageId>,
}

/// One page of `GET /messages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagesPage {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
    /// Whether the page reaches the newest message of the narrow.
    pub found_newest: bool,
}

/// A Zulip REST client for the bot: one request per call, no retries. Cheap to clone.
#[derive(Clone)]
pub struct ZulipApi {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// `…/api/v1`, without a trailing slash.
    base: String,
    email: String,
    key: Secret,
    options: ApiOptions,
}

impl fmt::Debug for ZulipApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZulipApi")
            .field("base", &self.inner.base)
            .field("email", &self.inner.email)
            .finish_non_exhaustive()
    }
}

impl ZulipApi {
    /// A client for `settings`; fails only when TLS or the HTTP client cannot be set up.
    pub fn new(settings: &ZulipSettings, options: ApiOptions) -> Result<Self, ZulipError> {
        let spec = ClientSpec::new(
            "tether-zulip",
            &settings.server_url,
            options.connect_timeout,
        );
        let http = tether_http::client(&spec).map_err(|e| ZulipError::Transport {
            detail: e.to_string(),
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                base: format!("{}/api/v1", settings.server_url),
                email: settings.bot_email.clone(),
                key: settings.api_key.clone(),
                options,
            }),
        })
    }

    /// The bot's email.
    pub fn bot_email(&self) -> &str {
        &self.inner.email
    }

    /// `GET /users/me`: the bot's own user id, to recognise its messages.
    pub async fn me(&self) -> Result<BotIdentity, ZulipError> {
        let body = self.call(Method::GET, "/users/me", &[], None).await?;
        serde_json::from_value(body).map_err(|err| bad_response("users/me", &err))
    }

    /// `POST /messages` to `stream`, `topic`; returns the new message's id.
    pub async fn send_stream_message(
        &self,
        stream: &str,
        topic: &str,
        content: &str,
    ) -> Result<MessageId, ZulipError> {
        let form = [
            ("type", "stream".to_owned()),
            ("to", stream.to_owned()),
            ("topic", topic.to_owned()),
            ("content", content.to_owned()),
        ];
        let body = self.call(Method::POST, "/messages", &form, None).await?;
        let id = body
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("messages: no integer `id` in the response"))?;
        Ok(MessageId(id))
    }

    /// `POST /register`: a queue of message events narrowed to `stream` and `topic`.
    pub async fn register(&self, stream: &str, topic: &str) -> Result<RegisteredQueue, ZulipError> {
        let form = [
            ("event_types", json!(["message"]).to_string()),
            (
                "narrow",
                json!([["stream", stream], ["topic", topic]]).to_string(),
            ),
            ("apply_markdown", "false".to_owned()),
        ];
        let body = self.call(Method::POST, "/register", &form, None).await?;
        let queue_id = body
            .get("queue_id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("register: no `queue_id` in the response"))?
            .to_owned();
        let last_event_id = body
            .get("last_event_id")
            .and_then(Value::as_i64)
            .unwrap_or(-1);
        Ok(RegisteredQueue {
            queue_id,
            last_event_id,
            feature_level: body.get("zulip_feature_level").and_then(Value::as_u64),
            // -1 in an empty realm: every message id is newer.
            max_message_id: body
                .get("max_message_id")
                .and_then(Value::as_i64)
                .map(|id| MessageId(u64::try_from(id).unwrap_or(0))),
        })
    }

    /// `GET /events`: blocks until there are events newer than `last_event_id` (acknowledging
    /// everything up to it), or until the server's long-poll timeout (a heartbeat). With
    /// `dont_block` it answers at once. A poll that outlives [`ApiOptions::poll_timeout`] on
    /// the client side returns no events.
    pub async fn get_events(
        &self,
        queue_id: &str,
        last_event_id: i64,
        dont_block: bool,
    ) -> Result<Vec<Event>, ZulipError> {
        let query = [
            ("queue_id", queue_id.to_owned()),
            ("last_event_id", last_event_id.to_string()),
            ("dont_block", dont_block.to_string()),
        ];
        let timeout = self.inner.options.poll_timeout;
        let body = match self
            .call(Method::GET, "/events", &query, Some(timeout))
            .await
        {
            Err(ZulipError::Transport { detail }) if detail.starts_with(TIMED_OUT) => {
                tracing::debug!("zulip long-poll outlived the client timeout; polling again");
                return Ok(Vec::new());
            }
            Err(ZulipError::BadEventQueue { queue_id: named }) if named.is_empty() => {
                return Err(ZulipError::BadEventQueue {
                    queue_id: queue_id.to_owned(),
                });
            }
            other => other?,
        };
        let events = body
            .get("events")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("events: no `events` array in the response"))?;
        events
            .iter()
            .map(Event::parse)
            .collect::<Result<_, _>>()
            .map_err(|detail| bad(&format!("events: {detail}")))
    }

    /// `DELETE /events`: deregisters a queue. A queue that is already gone counts as deleted.
    pub async fn delete_queue(&self, queue_id: &str) -> Result<(), ZulipError> {
        let form = [("queue_id", queue_id.to_owned())];
        match self.call(Method::DELETE, "/events", &form, None).await {
            Ok(_) | Err(ZulipError::BadEventQueue { .. }) => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// `GET /messages`: up to `num_after` messages of `stream`/`topic` strictly newer than
    /// `anchor`, oldest first, as raw Markdown. Servers too old for `include_anchor` may return
    /// the anchor itself; callers filter by id.
    pub async fn get_messages_after(
        &self,
        stream: &str,
        topic: &str,
        anchor: MessageId,
        num_after: u32,
    ) -> Result<MessagesPage, ZulipError> {
        self.get_messages(stream, topic, &anchor.to_string(), 0, num_after)
            .await
    }

    /// `GET /messages`: the newest `count` messages of `stream`/`topic`, oldest first.
    pub async fn recent_messages(
        &self,
        stream: &str,
        topic: &str,
        count: u32,
    ) -> Result<MessagesPage, ZulipError> {
        self.get_messages(stream, topic, "newest", count, 0).await
    }

    async fn get_messages(
        &self,
        stream: &str,
        topic: &str,
        anchor: &str,
        num_before: u32,
        num_after: u32,
    ) -> Result<MessagesPage, ZulipError> {
        let narrow = json!([
            {"operator": "stream", "operand": stream},
            {"operator": "topic", "operand": topic},
        ]);
        let query = [
            ("anchor", anchor.to_owned()),
            // "newest" names the newest message itself, which must be included.
            ("include_anchor", (anchor == "newest").to_string()),
            ("num_before", num_before.to_string()),
            ("num_after", num_after.to_string()),
            ("narrow", narrow.to_string()),
            ("apply_markdown", "false".to_owned()),
        ];
        let body = self.call(Method::GET, "/messages", &query, None).await?;
        let messages = body
            .get("messages")
            .cloned()
            .ok_or_else(|| bad("messages: no `messages` array in the response"))?;
        let mut messages: Vec<Message> =
            serde_json::from_value(messages).map_err(|err| bad_response("messages", &err))?;
        messages.sort_by_key(|m| m.id);
        let found_newest = body
            .get("found_newest")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        Ok(MessagesPage {
            messages,
            found_newest,
        })
    }

    /// Sends one request and classifies the answer by HTTP status and Zulip's `code`.
    async fn call(
        &self,
        method: Method,
        path: &str,
        params: &[(&str, String)],
        timeout: Option<Duration>,
    ) -> Result<Value, ZulipError> {
        let url = format!("{}{path}", self.inner.base);
        let is_get = method == Method::GET;
        let mut request: RequestBuilder = self
            .inner
            .http
            .request(method.clone(), &url)
            .basic_auth(&self.inner.email, Some(self.inner.key.expose()))
            .timeout(timeout.unwrap_or(self.inner.options.request_timeout));
        request = if is_get {
            request.query(params)
        } else {
            request.form(params)
        };
        let response = request.send().await.map_err(|err| transport(&err))?;
        let status = response.status();
        let asked_wait = tether_http::retry_after(response.headers());
        let bytes = response.bytes().await.map_err(|err| transport(&err))?;
        tracing::debug!(%method, path, status = status.as_u16(), "zulip request");
        let json: Option<Value> = serde_json::from_slice(&bytes).ok();
        if status.is_success() {
            let body = json.ok_or_else(|| bad(&format!("{path}: the body is not JSON")))?;
            return match body.get("result").and_then(Value::as_str) {
                Some("success") => Ok(body),
                _ => Err(bad(&format!(
                    "{path}: HTTP {status} without result=success"
                ))),
            };
        }
        let error: ErrorBody = json
            .as_ref()
            .and_then(|v| ErrorBody::deserialize(v).ok())
            .unwrap_or_default();
        Err(classify(status, error, asked_wait, &bytes))
    }
}

/// The prefix of a transport error's detail when the request timed out.
const TIMED_OUT: &str = "timed out";

/// The error for a failed request; `asked_wait` is what its `Retry-After` header said.
fn classify(
    status: StatusCode,
    error: ErrorBody,
    asked_wait: Option<Duration>,
    raw: &[u8],
) -> ZulipError {
    let code = error.code.clone().unwrap_or_else(|| "none".to_owned());
    let msg = if error.msg.is_empty() {
        tether_http::snippet(raw)
    } else {
        error.msg
    };
    match status.as_u16() {
        429 => ZulipError::RateLimited {
            retry_after: tether_http::requested_wait(error.retry_after, asked_wait),
        },
        401 | 403 => ZulipError::Auth {
            status: status.as_u16(),
            code,
            msg,
        },
        400 if code == "BAD_EVENT_QUEUE_ID" => ZulipError::BadEventQueue {
            queue_id: error.queue_id.unwrap_or_default(),
        },
        500..=599 => ZulipError::Server {
            status: status.as_u16(),
            detail: msg,
        },
        other => ZulipError::Rejected {
            status: other,
            code,
            msg,
        },
    }
}

fn transport(err: &reqwest::Error) -> ZulipError {
    let detail = if err.is_timeout() {
        format!("{TIMED_OUT}: {}", tether_http::describe(err))
    } else {
        tether_http::describe(err)
    };
    ZulipError::Transport { detail }
}

fn bad(detail: &str) -> ZulipError {
    ZulipError::BadResponse {
        detail: detail.to_owned(),
    }
}

fn bad_response(what: &str, err: &serde_json::Error) -> ZulipError {
    bad(&format!("{what}: {err}"))
}
