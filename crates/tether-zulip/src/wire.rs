//! The shapes of Zulip's responses that the client reads (`result`, `msg`, `code`, the
//! event and message objects), parsed leniently:
//! unknown fields are ignored, because servers add fields with every feature level.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A Zulip message id. Ids increase across the whole realm, so "newer than the question" is a
/// plain comparison.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct MessageId(pub u64);

impl MessageId {
    /// The number itself.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A message as delivered by `GET /events` or `GET /messages`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Message {
    /// The message id.
    pub id: MessageId,
    /// The sender's user id (the bot's own messages are recognised by it).
    pub sender_id: u64,
    /// The sender's email.
    #[serde(default)]
    pub sender_email: String,
    /// The sender's full name.
    #[serde(default)]
    pub sender_full_name: String,
    /// The content: raw Markdown, since the client always asks for `apply_markdown=false`.
    #[serde(default)]
    pub content: String,
    /// The topic. Zulip calls it `subject` in message objects; there is no `topic` key.
    #[serde(default)]
    pub subject: String,
    /// `stream` for channel messages, `private` for direct messages.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The channel name for channel messages (an array of users for direct messages).
    #[serde(default)]
    pub display_recipient: Value,
}

impl Message {
    /// The channel's name, for a channel message.
    pub fn stream_name(&self) -> Option<&str> {
        match self.kind.as_str() {
            "stream" | "channel" => self.display_recipient.as_str(),
            _ => None,
        }
    }
}

/// One event from `GET /events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A new message matching the queue's narrow (possibly more loosely than asked).
    Message {
        /// The event id (acknowledged through `last_event_id`).
        id: i64,
        /// The message.
        message: Box<Message>,
    },
    /// A keep-alive sent to every queue; only its id matters.
    Heartbeat {
        /// The event id.
        id: i64,
    },
    /// Any other event type; only its id matters.
    Other {
        /// The event id.
        id: i64,
        /// Its `type`.
        kind: String,
    },
}

impl Event {
    /// The event id, which the next poll acknowledges.
    pub fn id(&self) -> i64 {
        match self {
            Event::Message { id, .. } | Event::Heartbeat { id } | Event::Other { id, .. } => *id,
        }
    }

    pub(crate) fn parse(value: &Value) -> Result<Self, String> {
        let id = value
            .get("id")
            .and_then(Value::as_i64)
            .ok_or("an event without an integer `id`")?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "heartbeat" => Ok(Event::Heartbeat { id }),
            "message" => {
                let message = value
                    .get("message")
                    .ok_or("a message event without `message`")?;
                let message = Message::deserialize(message)
                    .map_err(|err| format!("a malformed message event: {err}"))?;
                Ok(Event::Message {
                    id,
                    message: Box::new(message),
                })
            }
            other => Ok(Event::Other {
                id,
                kind: other.to_owned(),
            }),
        }
    }
}

/// Who the bot is (`GET /users/me`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BotIdentity {
    /// The bot's user id: messages with this `sender_id` are the bot's own.
    pub user_id: u64,
    /// The bot's email.
    #[serde(default)]
    pub email: String,
    /// The bot's full name.
    #[serde(default)]
    pub full_name: String,
}

/// The error body every failed call carries (`JsonableError`).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorBody {
    #[serde(default)]
    pub(crate) msg: String,
    #[serde(default)]
    pub(crate) code: Option<String>,
    #[serde(default)]
    pub(crate) queue_id: Option<String>,
    #[serde(rename = "retry-after", default)]
    pub(crate) retry_after: Option<f64>,
}
