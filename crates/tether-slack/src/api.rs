//! The low level: one HTTP request per Web API call, as Slack documents it — `POST
//! <api>/<method>`, the token in an `Authorization: Bearer` header, JSON bodies for the write
//! methods and form bodies for the rest, `{"ok":true,…}` or `{"ok":false,"error":"…"}` back.
//!
//! The tokens are sent only in a header reqwest marks sensitive, so they can appear neither in
//! a URL, nor in an error, nor in a log line. `apps.connections.open` returns a URL holding a
//! one-time ticket; [`SocketUrl`] keeps it out of `Debug`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tether_http::ClientSpec;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::{RequestBuilder, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use tether_config::Secret;

use crate::error::SlackError;
use crate::settings::SlackSettings;
use crate::wire::{BotIdentity, Message, Ts};

/// Timeouts of the HTTP layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiOptions {
    /// Connecting to the server.
    pub connect_timeout: Duration,
    /// A whole request.
    pub request_timeout: Duration,
}

impl Default for ApiOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// The Socket Mode URL `apps.connections.open` returned (it holds a one-time ticket, so its
/// `Debug` shows only the host).
#[derive(Clone)]
pub struct SocketUrl(pub(crate) String);

impl fmt::Debug for SocketUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = reqwest::Url::parse(&self.0)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        write!(f, "SocketUrl({host}, ticket hidden)")
    }
}

/// One page of `conversations.replies` or `conversations.history`.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesPage {
    /// The messages, as Slack ordered them.
    pub messages: Vec<Message>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// What a message posted with [`SlackApi::post_message`] carries.
#[derive(Debug, Clone, PartialEq)]
pub struct OutgoingMessage {
    /// The fallback text (notifications, clients without blocks).
    pub text: String,
    /// Block Kit blocks, or `Value::Null` for a plain message.
    pub blocks: Value,
    /// The thread to post in (`None` starts a new one).
    pub thread_ts: Option<Ts>,
    /// A nonce tether finds its own post by after an ambiguous failure.
    pub nonce: Option<String>,
}

/// Where a message was posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posted {
    /// The channel's ID.
    pub channel: String,
    /// The message's ts.
    pub ts: Ts,
}

/// A Slack Web API client for the bot: one request per call, no retries. Cheap to clone.
#[derive(Clone)]
pub struct SlackApi {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    base: String,
    bot_token: Secret,
    app_token: Secret,
}

impl fmt::Debug for SlackApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlackApi")
            .field("base", &self.inner.base)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy)]
enum Token {
    Bot,
    App,
}

impl SlackApi {
    /// A client for `settings`; fails only when TLS or the HTTP client cannot be set up.
    pub fn new(settings: &SlackSettings, options: &ApiOptions) -> Result<Self, SlackError> {
        let spec = ClientSpec::new("tether-slack", &settings.api_url, options.connect_timeout)
            .timeout(options.request_timeout);
        let http = tether_http::client(&spec).map_err(|e| SlackError::Transport {
            detail: e.to_string(),
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                base: settings.api_url.clone(),
                bot_token: settings.bot_token.clone(),
                app_token: settings.app_token.clone(),
            }),
        })
    }

    /// `auth.test`: who the bot is.
    pub async fn auth_test(&self) -> Result<BotIdentity, SlackError> {
        let body = self.form("auth.test", Token::Bot, &[]).await?;
        BotIdentity::deserialize(&body).map_err(|err| bad("auth.test", &err))
    }

    /// `users.info`: how a person is shown — their display name, else their real name, else
    /// their user name (scope `users:read`).
    pub async fn user_name(&self, user: &str) -> Result<String, SlackError> {
        let body = self
            .form("users.info", Token::Bot, &[("user", user.to_owned())])
            .await?;
        let field = |path: &str| {
            body.pointer(path)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        field("/user/profile/display_name")
            .or_else(|| field("/user/real_name"))
            .or_else(|| field("/user/name"))
            .ok_or_else(|| bad_shape("users.info: no name"))
    }

    /// `apps.connections.open` (with the app-level token): a fresh Socket Mode URL.
    pub async fn open_connection(&self) -> Result<SocketUrl, SlackError> {
        let body = self.form("apps.connections.open", Token::App, &[]).await?;
        let url = body
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| u.starts_with("wss://") || u.starts_with("ws://"))
            .ok_or_else(|| bad_shape("apps.connections.open: no ws(s) `url`"))?;
        Ok(SocketUrl(url.to_owned()))
    }

    /// `chat.postMessage` into `channel`.
    pub async fn post_message(
        &self,
        channel: &str,
        message: &OutgoingMessage,
    ) -> Result<Posted, SlackError> {
        let mut body = json!({"channel": channel, "text": message.text, "unfurl_links": false});
        if !message.blocks.is_null() {
            body["blocks"] = message.blocks.clone();
        }
        if let Some(thread) = &message.thread_ts {
            body["thread_ts"] = json!(thread.as_str());
        }
        if let Some(nonce) = &message.nonce {
            body["metadata"] =
                json!({"event_type": "tether_question", "event_payload": {"nonce": nonce}});
        }
        let reply = self.json("chat.postMessage", &body).await?;
        posted("chat.postMessage", &reply)
    }

    /// `chat.update`: replaces the text and blocks of the bot's message `ts`.
    pub async fn update_message(
        &self,
        channel: &str,
        ts: &Ts,
        text: &str,
        blocks: &Value,
    ) -> Result<(), SlackError> {
        let body = json!({"channel": channel, "ts": ts.as_str(), "text": text, "blocks": blocks});
        self.json("chat.update", &body).await.map(drop)
    }

    /// `conversations.replies`: one page of thread `thread`, messages newer than `oldest`.
    pub async fn replies(
        &self,
        channel: &str,
        thread: &Ts,
        oldest: Option<&Ts>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<MessagesPage, SlackError> {
        let mut params = vec![
            ("channel", channel.to_owned()),
            ("ts", thread.as_str().to_owned()),
            ("limit", limit.to_string()),
            ("include_all_metadata", "true".to_owned()),
        ];
        if let Some(oldest) = oldest {
            params.push(("oldest", oldest.as_str().to_owned()));
        }
        if let Some(cursor) = cursor {
            params.push(("cursor", cursor.to_owned()));
        }
        let body = self
            .form("conversations.replies", Token::Bot, &params)
            .await?;
        page("conversations.replies", &body)
    }

    /// `conversations.history`: the channel's newest top-level messages since `oldest`.
    pub async fn history(
        &self,
        channel: &str,
        oldest: &Ts,
        limit: u32,
    ) -> Result<MessagesPage, SlackError> {
        let params = [
            ("channel", channel.to_owned()),
            ("oldest", oldest.as_str().to_owned()),
            ("limit", limit.to_string()),
            ("include_all_metadata", "true".to_owned()),
        ];
        let body = self
            .form("conversations.history", Token::Bot, &params)
            .await?;
        page("conversations.history", &body)
    }

    async fn form(
        &self,
        method: &'static str,
        token: Token,
        params: &[(&str, String)],
    ) -> Result<Value, SlackError> {
        let request = self.request(method, token).form(params);
        self.send(method, token, request).await
    }

    async fn json(&self, method: &'static str, body: &Value) -> Result<Value, SlackError> {
        let request = self.request(method, Token::Bot).json(body);
        self.send(method, Token::Bot, request).await
    }

    fn request(&self, method: &str, token: Token) -> RequestBuilder {
        let secret = match token {
            Token::Bot => &self.inner.bot_token,
            Token::App => &self.inner.app_token,
        };
        let mut request = self
            .inner
            .http
            .post(format!("{}/{method}", self.inner.base));
        if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", secret.expose())) {
            value.set_sensitive(true);
            request = request.header(AUTHORIZATION, value);
        }
        request
    }

    /// Sends one request and classifies the answer by HTTP status and Slack's `error`.
    async fn send(
        &self,
        method: &'static str,
        token: Token,
        request: RequestBuilder,
    ) -> Result<Value, SlackError> {
        let response = request.send().await.map_err(|err| transport(&err))?;
        let status = response.status();
        let retry_after =
            tether_http::requested_wait(None, tether_http::retry_after(response.headers()));
        let bytes = response.bytes().await.map_err(|err| transport(&err))?;
        tracing::debug!(method, status = status.as_u16(), "slack request");
        let json: Option<Value> = serde_json::from_slice(&bytes).ok();
        if status == StatusCode::TOO_MANY_REQUESTS {
            return Err(SlackError::RateLimited { retry_after });
        }
        if status.is_server_error() {
            let detail = json
                .as_ref()
                .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
                .unwrap_or_else(|| tether_http::snippet(&bytes));
            return Err(SlackError::Server {
                status: status.as_u16(),
                detail,
            });
        }
        let body = json.ok_or_else(|| {
            bad_shape(&format!(
                "{method}: HTTP {status} with a body that is not JSON"
            ))
        })?;
        if body.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(body);
        }
        let error = body
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown_error")
            .to_owned();
        Err(classify(method, token, status, error, retry_after))
    }
}

fn classify(
    method: &'static str,
    token: Token,
    status: StatusCode,
    error: String,
    retry_after: Duration,
) -> SlackError {
    match error.as_str() {
        "invalid_auth"
        | "not_authed"
        | "account_inactive"
        | "token_revoked"
        | "token_expired"
        | "not_allowed_token_type" => SlackError::Auth {
            token: match token {
                Token::Bot => "bot token",
                Token::App => "app-level token",
            },
            error,
        },
        "ratelimited" | "rate_limited" => SlackError::RateLimited { retry_after },
        "internal_error" | "fatal_error" | "service_unavailable" | "request_timeout" => {
            SlackError::Server {
                status: status.as_u16(),
                detail: error,
            }
        }
        _ => SlackError::Rejected { method, error },
    }
}

fn posted(method: &str, body: &Value) -> Result<Posted, SlackError> {
    let channel = body.get("channel").and_then(Value::as_str);
    let ts = body.get("ts").and_then(Value::as_str).and_then(Ts::parse);
    match (channel, ts) {
        (Some(channel), Some(ts)) => Ok(Posted {
            channel: channel.to_owned(),
            ts,
        }),
        _ => Err(bad_shape(&format!("{method}: no `channel` and `ts`"))),
    }
}

fn page(method: &str, body: &Value) -> Result<MessagesPage, SlackError> {
    let messages = body
        .get("messages")
        .cloned()
        .ok_or_else(|| bad_shape(&format!("{method}: no `messages`")))?;
    let messages: Vec<Message> =
        serde_json::from_value(messages).map_err(|err| bad(method, &err))?;
    let next_cursor = body
        .pointer("/response_metadata/next_cursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    Ok(MessagesPage {
        messages,
        next_cursor,
    })
}

fn transport(err: &reqwest::Error) -> SlackError {
    SlackError::Transport {
        detail: tether_http::describe(err),
    }
}

fn bad_shape(detail: &str) -> SlackError {
    SlackError::BadResponse {
        detail: detail.to_owned(),
    }
}

fn bad(what: &str, err: &serde_json::Error) -> SlackError {
    bad_shape(&format!("{what}: {err}"))
}
