//! The Bot API objects tether reads, as Telegram sends them (unknown fields ignored).

use serde::{Deserialize, Serialize};

/// `{"ok":…,"result":…}` or `{"ok":false,"error_code":…,"description":…,"parameters":…}`.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope {
    pub ok: bool,
    #[serde(default)]
    pub result: serde_json::Value,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameters: Option<ResponseParameters>,
}

/// `parameters` of an error: `retry_after` on 429.
#[derive(Debug, Deserialize)]
pub(crate) struct ResponseParameters {
    #[serde(default)]
    pub retry_after: Option<f64>,
}

/// A user or bot.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct User {
    /// The user id (a bot's equals the digits of its token before `:`).
    pub id: u64,
    /// Whether this is a bot.
    #[serde(default)]
    pub is_bot: bool,
    /// First name.
    #[serde(default)]
    pub first_name: String,
    /// Last name.
    #[serde(default)]
    pub last_name: Option<String>,
    /// `@username` without the `@`.
    #[serde(default)]
    pub username: Option<String>,
}

impl User {
    /// The name shown as the responder: first and last name, else the username, else the id.
    pub fn display_name(&self) -> String {
        let full = match &self.last_name {
            Some(last) if !last.is_empty() => format!("{} {last}", self.first_name),
            _ => self.first_name.clone(),
        };
        if !full.trim().is_empty() {
            return full.trim().to_owned();
        }
        match &self.username {
            Some(u) => format!("@{u}"),
            None => format!("user {}", self.id),
        }
    }
}

/// A chat.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Chat {
    /// The chat id (negative for groups).
    pub id: i64,
    /// `private`, `group`, `supergroup` or `channel`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// Whether the supergroup has forum topics (`getChat` only).
    #[serde(default)]
    pub is_forum: bool,
}

/// A message.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Message {
    /// Unique within the chat.
    pub message_id: i64,
    /// The sender (absent in channels).
    #[serde(default)]
    pub from: Option<User>,
    /// The chat.
    pub chat: Chat,
    /// Text, if any.
    #[serde(default)]
    pub text: Option<String>,
    /// When it was sent (Unix seconds).
    #[serde(default)]
    pub date: i64,
    /// The message it replies to.
    #[serde(default)]
    pub reply_to_message: Option<Box<Message>>,
    /// The forum topic it is in.
    #[serde(default)]
    pub message_thread_id: Option<i64>,
}

/// A press of an inline-keyboard button.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct CallbackQuery {
    /// Answer it with `answerCallbackQuery`.
    pub id: String,
    /// Who pressed.
    pub from: User,
    /// The message the button is on.
    #[serde(default)]
    pub message: Option<Message>,
    /// The button's `callback_data`.
    #[serde(default)]
    pub data: Option<String>,
}

/// One entry of `getUpdates`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Update {
    /// Sequential id; `offset = update_id + 1` confirms it.
    pub update_id: i64,
    /// A new message.
    #[serde(default)]
    pub message: Option<Message>,
    /// A button press.
    #[serde(default)]
    pub callback_query: Option<CallbackQuery>,
}
