//! Slack's wire shapes the client reads: message timestamps, messages (from
//! `conversations.replies` and from `message` events), Socket Mode envelopes and button clicks.
//!
//! Only the fields tether uses are parsed; everything else is ignored, so a Slack that adds
//! fields keeps working.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A message timestamp (`"1503435956.000247"`): a message's id, unique per channel. Compared
/// as two integers (seconds, micro-part), never as text or a float. Serialized as Slack writes
/// it (a string), and read back only when it is that shape.
#[derive(Debug, Clone, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ts {
    raw: String,
    key: (u64, u64),
}

impl Ts {
    /// Parses `secs.fraction`; `None` when it is not that shape.
    pub fn parse(raw: &str) -> Option<Self> {
        let (secs, frac) = raw.split_once('.').unwrap_or((raw, "0"));
        if secs.is_empty() || frac.is_empty() || frac.len() > 9 {
            return None;
        }
        let secs: u64 = secs.parse().ok()?;
        let digits: u64 = frac.parse().ok()?;
        // Scale to nine digits so "1.5" and "1.500000" compare equal.
        let scale = 10u64.pow(u32::try_from(9 - frac.len()).ok()?);
        Some(Ts {
            raw: raw.to_owned(),
            key: (secs, digits * scale),
        })
    }

    /// The first ts of second `secs`.
    pub fn from_secs(secs: u64) -> Self {
        Ts {
            raw: format!("{secs}.000000"),
            key: (secs, 0),
        }
    }

    /// The timestamp as Slack wrote it (what the API takes back).
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

impl TryFrom<String> for Ts {
    type Error = String;

    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Ts::parse(&raw).ok_or_else(|| format!("{raw:?} is not a Slack ts"))
    }
}

impl From<Ts> for String {
    fn from(ts: Ts) -> String {
        ts.raw
    }
}

impl PartialEq for Ts {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Ord for Ts {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

impl PartialOrd for Ts {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::hash::Hash for Ts {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl fmt::Display for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// Who the bot is (`auth.test`), to recognise its own messages.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BotIdentity {
    /// The bot user's id (`U…`).
    pub user_id: String,
    /// The bot's id (`B…`), on every message it posts.
    #[serde(default)]
    pub bot_id: Option<String>,
    /// The workspace's id (`T…`).
    #[serde(default)]
    pub team_id: Option<String>,
}

/// A message as `conversations.replies` and `message` events carry it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    /// `message_changed`, `bot_message`, `thread_broadcast`, … (`None` for a plain message).
    #[serde(default)]
    pub subtype: Option<String>,
    /// The author (a human or the bot user).
    #[serde(default)]
    pub user: Option<String>,
    /// Set on messages posted by a bot.
    #[serde(default)]
    pub bot_id: Option<String>,
    /// The text, with `&`, `<` and `>` escaped as Slack does.
    #[serde(default)]
    pub text: String,
    /// The message's id.
    pub ts: String,
    /// The thread's parent, when the message is in a thread (the parent carries its own).
    #[serde(default)]
    pub thread_ts: Option<String>,
    /// The channel (events only).
    #[serde(default)]
    pub channel: Option<String>,
    /// `metadata.event_payload`, where tether puts a question's nonce.
    #[serde(default)]
    pub metadata: Option<Value>,
}

impl Message {
    /// The message's ts, parsed.
    pub fn ts(&self) -> Option<Ts> {
        Ts::parse(&self.ts)
    }

    /// The thread it belongs to, parsed.
    pub fn thread(&self) -> Option<Ts> {
        self.thread_ts.as_deref().and_then(Ts::parse)
    }

    /// The nonce tether put in the message's metadata, if any.
    pub fn nonce(&self) -> Option<&str> {
        self.metadata
            .as_ref()?
            .get("event_payload")?
            .get("nonce")?
            .as_str()
    }
}

/// A button pressed under one of the bot's messages (`block_actions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonPress {
    /// The channel of the message.
    pub channel: String,
    /// The message the button is on.
    pub message_ts: Ts,
    /// That message's thread (its own ts when it starts one).
    pub thread_ts: Ts,
    /// Who pressed it.
    pub user: String,
    /// Their display name, when Slack sent one.
    pub user_name: Option<String>,
    /// The button's `action_id`.
    pub action_id: String,
}

/// Something Socket Mode delivered that may answer a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A `message` event.
    Message(Message),
    /// A button press.
    Button(ButtonPress),
}

impl Incoming {
    /// The channel and thread it belongs to (`None` for a message outside any thread).
    pub fn place(&self) -> Option<(&str, Ts)> {
        match self {
            Incoming::Message(m) => Some((m.channel.as_deref()?, m.thread()?)),
            Incoming::Button(b) => Some((b.channel.as_str(), b.thread_ts.clone())),
        }
    }
}

/// One Socket Mode frame.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Frame {
    /// The connection is ready.
    Hello,
    /// Slack will close this connection (`refresh_requested`, `warning`, …): open another.
    Disconnect { reason: String },
    /// An envelope to acknowledge, with what it carried (if it can answer a question).
    Envelope {
        envelope_id: String,
        incoming: Option<Box<Incoming>>,
    },
    /// Anything else.
    Other,
}

impl Frame {
    pub(crate) fn parse(text: &str) -> Frame {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return Frame::Other;
        };
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "hello" => return Frame::Hello,
            "disconnect" => {
                let reason = value.get("reason").and_then(Value::as_str).unwrap_or("");
                return Frame::Disconnect {
                    reason: reason.to_owned(),
                };
            }
            _ => {}
        }
        let Some(envelope_id) = value.get("envelope_id").and_then(Value::as_str) else {
            return Frame::Other;
        };
        let payload = value.get("payload").unwrap_or(&Value::Null);
        let incoming = match kind {
            "events_api" => payload
                .get("event")
                .filter(|e| e.get("type").and_then(Value::as_str) == Some("message"))
                .and_then(|e| Message::deserialize(e).ok())
                .map(|m| Box::new(Incoming::Message(m))),
            "interactive" => button(payload).map(|b| Box::new(Incoming::Button(b))),
            _ => None,
        };
        Frame::Envelope {
            envelope_id: envelope_id.to_owned(),
            incoming,
        }
    }
}

/// A `block_actions` payload's first button.
fn button(payload: &Value) -> Option<ButtonPress> {
    if payload.get("type")?.as_str()? != "block_actions" {
        return None;
    }
    let str_at = |v: &Value, path: &[&str]| -> Option<String> {
        let mut at = v;
        for key in path {
            at = at.get(key)?;
        }
        at.as_str().map(str::to_owned)
    };
    let channel = str_at(payload, &["container", "channel_id"])
        .or_else(|| str_at(payload, &["channel", "id"]))?;
    let message_ts = str_at(payload, &["container", "message_ts"])
        .or_else(|| str_at(payload, &["message", "ts"]))?;
    let message_ts = Ts::parse(&message_ts)?;
    let thread_ts = str_at(payload, &["container", "thread_ts"])
        .or_else(|| str_at(payload, &["message", "thread_ts"]))
        .and_then(|t| Ts::parse(&t))
        .unwrap_or_else(|| message_ts.clone());
    let action = payload.get("actions")?.as_array()?.first()?;
    Some(ButtonPress {
        channel,
        message_ts,
        thread_ts,
        user: str_at(payload, &["user", "id"])?,
        user_name: str_at(payload, &["user", "name"])
            .or_else(|| str_at(payload, &["user", "username"])),
        action_id: str_at(action, &["action_id"])?,
    })
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
