//! The low level: one Bot API request per call (`POST {api_url}/bot<token>/<method>` with a
//! JSON body), Telegram's errors typed.
//!
//! The token is in every URL, so URLs are never logged and every reqwest error has its URL
//! stripped (and the token redacted from any text kept, in case a proxy echoed it).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tether_http::ClientSpec;

use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tether_config::Secret;

use crate::error::TelegramError;
use crate::settings::TelegramSettings;
use crate::wire::{Chat, Envelope, Message, Update, User};

/// Timeouts of the HTTP layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiOptions {
    /// Connecting to the server.
    pub connect_timeout: Duration,
    /// A whole ordinary request.
    pub request_timeout: Duration,
    /// The `timeout` of `getUpdates` (seconds on the wire; Telegram caps it at 50).
    pub poll_timeout: Duration,
}

impl Default for ApiOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            poll_timeout: Duration::from_secs(30),
        }
    }
}

/// An inline keyboard button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// The label.
    pub text: String,
    /// `callback_data` (1–64 bytes).
    pub data: String,
}

/// A Bot API client: one request per call, no retries. Cheap to clone.
#[derive(Clone)]
pub struct TelegramApi {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    api_url: String,
    token: Secret,
    options: ApiOptions,
}

impl fmt::Debug for TelegramApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelegramApi")
            .field("api_url", &self.inner.api_url)
            .finish_non_exhaustive()
    }
}

impl TelegramApi {
    /// A client for `settings`; fails only when TLS or the HTTP client cannot be set up.
    pub fn new(settings: &TelegramSettings, options: ApiOptions) -> Result<Self, TelegramError> {
        let spec = ClientSpec::new(
            "tether-telegram",
            &settings.api_url,
            options.connect_timeout,
        );
        let http = tether_http::client(&spec).map_err(|e| TelegramError::Transport {
            detail: e.to_string(),
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                api_url: settings.api_url.clone(),
                token: settings.token.clone(),
                options,
            }),
        })
    }

    /// The options in use.
    pub fn options(&self) -> &ApiOptions {
        &self.inner.options
    }

    /// `getMe`: the bot itself.
    pub async fn get_me(&self) -> Result<User, TelegramError> {
        self.call("getMe", json!({}), None).await
    }

    /// `getChat`: the chat (whether it has forum topics).
    pub async fn get_chat(&self, chat_id: &str) -> Result<Chat, TelegramError> {
        self.call("getChat", json!({"chat_id": chat_ref(chat_id)}), None)
            .await
    }

    /// `createForumTopic` named `name` (1–128 characters): its `message_thread_id`.
    pub async fn create_forum_topic(
        &self,
        chat_id: &str,
        name: &str,
    ) -> Result<i64, TelegramError> {
        let body = json!({"chat_id": chat_ref(chat_id), "name": name});
        let topic: Value = self.call("createForumTopic", body, None).await?;
        topic["message_thread_id"]
            .as_i64()
            .ok_or_else(|| TelegramError::BadResponse {
                detail: "createForumTopic without a message_thread_id".to_owned(),
            })
    }

    /// `sendMessage` of plain `text` to `chat_id` (in the forum topic `thread`, if given),
    /// optionally as a reply and with buttons (one per row).
    pub async fn send_message(
        &self,
        chat_id: &str,
        text: &str,
        reply_to: Option<i64>,
        thread: Option<i64>,
        buttons: &[Button],
    ) -> Result<Message, TelegramError> {
        let mut body = json!({"chat_id": chat_ref(chat_id), "text": text});
        if let Some(thread) = thread {
            body["message_thread_id"] = json!(thread);
        }
        if let Some(id) = reply_to {
            body["reply_parameters"] =
                json!({"message_id": id, "allow_sending_without_reply": true});
        }
        if !buttons.is_empty() {
            body["reply_markup"] = keyboard(buttons);
        }
        self.call("sendMessage", body, None).await
    }

    /// `editMessageReplyMarkup` without a markup: removes the message's buttons. "Not modified"
    /// counts as done.
    pub async fn remove_keyboard(
        &self,
        chat_id: i64,
        message_id: i64,
    ) -> Result<(), TelegramError> {
        let body = json!({"chat_id": chat_id, "message_id": message_id});
        match self
            .call::<Value>("editMessageReplyMarkup", body, None)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_modified() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `answerCallbackQuery`: stops the button's spinner, showing `text` briefly.
    pub async fn answer_callback_query(&self, id: &str, text: &str) -> Result<(), TelegramError> {
        let body = json!({"callback_query_id": id, "text": text});
        self.call::<Value>("answerCallbackQuery", body, None)
            .await
            .map(|_| ())
    }

    /// `getUpdates` from `offset` (confirming everything before it), long-polling up to
    /// `timeout`.
    pub async fn get_updates(
        &self,
        offset: Option<i64>,
        timeout: Duration,
    ) -> Result<Vec<Update>, TelegramError> {
        let mut body = json!({
            "timeout": timeout.as_secs_f64().ceil() as u64,
            "allowed_updates": ["message", "callback_query"],
        });
        if let Some(offset) = offset {
            body["offset"] = json!(offset);
        }
        let margin = timeout + self.inner.options.request_timeout;
        self.call("getUpdates", body, Some(margin)).await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        body: Value,
        timeout: Option<Duration>,
    ) -> Result<T, TelegramError> {
        let url = format!(
            "{}/bot{}/{method}",
            self.inner.api_url,
            self.inner.token.expose()
        );
        let response = self
            .inner
            .http
            .post(url)
            .json(&body)
            .timeout(timeout.unwrap_or(self.inner.options.request_timeout))
            .send()
            .await
            .map_err(|e| self.transport(e))?;
        let status = response.status();
        let asked_wait = tether_http::retry_after(response.headers());
        let text = response.text().await.map_err(|e| self.transport(e))?;
        let envelope: Option<Envelope> = serde_json::from_str(&text).ok();
        match envelope {
            Some(env) if env.ok && status.is_success() => serde_json::from_value(env.result)
                .map_err(|e| TelegramError::BadResponse {
                    detail: format!("{method}: {e}"),
                }),
            Some(env) => Err(self.failure(method, status, env, asked_wait)),
            None if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS => {
                Err(self.failure(method, status, empty(&text), asked_wait))
            }
            None if status.is_success() => Err(TelegramError::BadResponse {
                detail: format!("{method}: not JSON"),
            }),
            None => Err(self.failure(method, status, empty(&text), asked_wait)),
        }
    }

    fn failure(
        &self,
        method: &'static str,
        status: StatusCode,
        env: Envelope,
        asked_wait: Option<std::time::Duration>,
    ) -> TelegramError {
        let description = self.redact(&env.description);
        let code = status.as_u16();
        match code {
            401 | 404 => TelegramError::Unauthorized {
                status: code,
                description,
            },
            409 => TelegramError::Conflict { description },
            429 => TelegramError::RateLimited {
                retry_after: tether_http::requested_wait(
                    env.parameters.and_then(|p| p.retry_after),
                    asked_wait,
                ),
            },
            500..=599 => TelegramError::Server {
                status: code,
                detail: description,
            },
            _ => TelegramError::Rejected {
                method,
                status: code,
                description,
            },
        }
    }

    /// A transport error described with its causes, never its URL.
    fn transport(&self, err: reqwest::Error) -> TelegramError {
        TelegramError::Transport {
            detail: self.redact(&tether_http::describe(&err.without_url())),
        }
    }

    /// Removes the token from text that might echo it.
    fn redact(&self, text: &str) -> String {
        let token = self.inner.token.expose();
        let mut cut: String = text.chars().take(300).collect();
        if !token.is_empty() {
            cut = cut.replace(token, "<token>");
        }
        cut
    }
}

/// A non-JSON error body: its start becomes the description.
fn empty(text: &str) -> Envelope {
    Envelope {
        ok: false,
        result: Value::Null,
        description: text.chars().take(200).collect(),
        parameters: None,
    }
}

/// A numeric chat id goes as a number, `@name` as a string.
fn chat_ref(chat_id: &str) -> Value {
    chat_id
        .parse::<i64>()
        .map_or_else(|_| json!(chat_id), |n| json!(n))
}

fn keyboard(buttons: &[Button]) -> Value {
    let rows: Vec<Value> = buttons
        .iter()
        .map(|b| json!([{"text": b.text, "callback_data": b.data}]))
        .collect();
    json!({"inline_keyboard": rows})
}
