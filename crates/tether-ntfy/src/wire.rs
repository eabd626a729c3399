//! ntfy's JSON shapes, as far as tether uses them: a publish with http actions, and the events
//! of a subscription stream.

use serde::{Deserialize, Serialize};

/// A message to publish (`POST /` with a JSON body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Publish {
    /// The topic.
    pub topic: String,
    /// The notification's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its text.
    pub message: String,
    /// 1 (min) to 5 (max); ntfy's default is 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// Tags (some show as emoji).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Buttons; ntfy shows at most three.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
}

impl Publish {
    /// The most action buttons ntfy shows on one notification.
    pub const MAX_ACTIONS: usize = 3;
}

/// An `http` action button: when pressed, the phone sends `method url` with `body`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// Always `http`.
    pub action: String,
    /// The button's label.
    pub label: String,
    /// Where the request goes.
    pub url: String,
    /// The request's method (`POST`).
    pub method: String,
    /// The request's headers (an `Authorization` the reply topic needs).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
    /// The request's body.
    pub body: String,
    /// Whether the notification is dismissed once the request succeeded.
    pub clear: bool,
}

impl Action {
    /// A button POSTing `body` to `url`, clearing the notification.
    pub fn http_post(label: impl Into<String>, url: impl Into<String>, body: String) -> Self {
        Action {
            action: "http".to_owned(),
            label: label.into(),
            url: url.into(),
            method: "POST".to_owned(),
            headers: std::collections::BTreeMap::new(),
            body,
            clear: true,
        }
    }
}

/// One event of a subscription stream, or a published message as the server returns it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Message {
    /// The message's id (unique per server); `since=` takes it.
    pub id: String,
    /// Unix seconds.
    #[serde(default)]
    pub time: i64,
    /// `open`, `keepalive`, `message` or `poll_request`.
    pub event: String,
    /// The topic (a comma-separated list for a multi-topic subscription).
    #[serde(default)]
    pub topic: String,
    /// The message's text (a message event's body).
    #[serde(default)]
    pub message: Option<String>,
    /// Its title.
    #[serde(default)]
    pub title: Option<String>,
}

impl Message {
    /// Whether this event is a message (not `open`, `keepalive`, …).
    pub fn is_message(&self) -> bool {
        self.event == "message"
    }
}
