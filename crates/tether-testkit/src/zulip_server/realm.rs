//! The fake realm: users, one or more streams, the stored messages and the event queues, with
//! the narrow matching that decides which queue sees which message.
//!
//! Everything sits behind one mutex; a `watch` counter is bumped on every change so that
//! blocked long-polls wake up without polling.

use std::collections::{HashMap, VecDeque};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// How a topic narrow matches, on queues and in `GET /messages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TopicMatch {
    /// Released servers: the whole topic, case-insensitively.
    #[default]
    Exact,
    /// Current Zulip main: also when the operand equals any whitespace-separated word of the
    /// topic (a narrow on `topic: "deploy"` also delivers `deploy failed`).
    WordMatch,
    /// The loosest fault: the topic is ignored, every message of the stream matches (so
    /// `Agent Q #10 — x` reaches a queue narrowed to `Agent Q #1 — x`).
    StreamOnly,
}

/// A user of the fake realm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZulipUser {
    /// The user id.
    pub id: u64,
    /// The email (the bot's is its login).
    pub email: String,
    /// The full name.
    pub full_name: String,
}

/// A message stored by the fake server.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The message id (increasing realm-wide).
    pub id: u64,
    /// Who posted it.
    pub sender: ZulipUser,
    /// The stream's name.
    pub stream: String,
    /// The topic, as stored (truncated to 60 characters like Zulip).
    pub topic: String,
    /// The content, normalised like Zulip (trailing whitespace and leading newlines removed).
    pub content: String,
    /// When it was stored.
    pub posted_at: Instant,
}

/// A live event queue, as tests see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueInfo {
    /// The queue id.
    pub id: String,
    /// The narrow's stream, if any.
    pub stream: Option<String>,
    /// The narrow's topic, if any.
    pub topic: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Queue {
    pub(crate) stream: Option<String>,
    pub(crate) topic: Option<String>,
    pub(crate) events: VecDeque<(i64, Value)>,
    pub(crate) next_event_id: i64,
    /// Bumped by each `GET /events`: an older poll still waiting returns empty.
    pub(crate) generation: u64,
    /// The last batch returned (for the duplicate-delivery fault).
    pub(crate) last_batch: Vec<Value>,
}

impl Queue {
    pub(crate) fn push(&mut self, mut event: Value) {
        self.next_event_id += 1;
        let id = self.next_event_id;
        if let Some(object) = event.as_object_mut() {
            object.insert("id".to_owned(), json!(id));
        }
        self.events.push_back((id, event));
    }

    /// Drops the events the client acknowledged.
    pub(crate) fn prune(&mut self, last_event_id: i64) {
        while self
            .events
            .front()
            .is_some_and(|(id, _)| *id <= last_event_id)
        {
            self.events.pop_front();
        }
    }
}

#[derive(Debug)]
pub(crate) struct Realm {
    pub(crate) bot: ZulipUser,
    pub(crate) streams: Vec<String>,
    pub(crate) messages: Vec<StoredMessage>,
    next_message_id: u64,
    pub(crate) queues: HashMap<String, Queue>,
    next_queue: u64,
    pub(crate) topic_match: TopicMatch,
    pub(crate) deleted_queues: Vec<String>,
}

/// Zulip's old `max_topic_length`; longer topics are truncated, not rejected.
const MAX_TOPIC: usize = 60;

impl Realm {
    pub(crate) fn new(bot: ZulipUser, stream: String) -> Self {
        Self {
            bot,
            streams: vec![stream],
            messages: Vec::new(),
            next_message_id: 100,
            queues: HashMap::new(),
            next_queue: 0,
            topic_match: TopicMatch::Exact,
            deleted_queues: Vec::new(),
        }
    }

    /// The stream's canonical name, matched case-insensitively.
    pub(crate) fn stream_named(&self, name: &str) -> Option<String> {
        self.streams
            .iter()
            .find(|s| s.to_lowercase() == name.trim().to_lowercase())
            .cloned()
    }

    fn stream_id(&self, name: &str) -> u64 {
        self.streams
            .iter()
            .position(|s| s == name)
            .map_or(0, |i| i as u64 + 1)
    }

    /// Stores a message (creating the stream if needed) and delivers it to every queue whose
    /// narrow matches. Returns its id.
    pub(crate) fn post(
        &mut self,
        sender: &ZulipUser,
        stream: &str,
        topic: &str,
        content: &str,
    ) -> u64 {
        let stream = match self.stream_named(stream) {
            Some(stream) => stream,
            None => {
                self.streams.push(stream.to_owned());
                stream.to_owned()
            }
        };
        self.next_message_id += 1;
        let message = StoredMessage {
            id: self.next_message_id,
            sender: sender.clone(),
            stream,
            topic: truncate_topic(topic.trim()),
            content: normalise_body(content),
            posted_at: Instant::now(),
        };
        let json = self.message_json(&message, false);
        let topic_match = self.topic_match;
        for queue in self.queues.values_mut() {
            if narrow_matches(
                topic_match,
                queue.stream.as_deref(),
                queue.topic.as_deref(),
                &message,
            ) {
                queue.push(json!({"type": "message", "flags": [], "message": json.clone()}));
            }
        }
        let id = message.id;
        self.messages.push(message);
        id
    }

    pub(crate) fn register(&mut self, stream: Option<String>, topic: Option<String>) -> String {
        self.next_queue += 1;
        let id = format!("1700000000:{}", self.next_queue);
        self.queues.insert(
            id.clone(),
            Queue {
                stream,
                topic,
                events: VecDeque::new(),
                next_event_id: -1,
                generation: 0,
                last_batch: Vec::new(),
            },
        );
        id
    }

    pub(crate) fn delete(&mut self, queue_id: &str) -> bool {
        let existed = self.queues.remove(queue_id).is_some();
        if existed {
            self.deleted_queues.push(queue_id.to_owned());
        }
        existed
    }

    pub(crate) fn expire_all(&mut self) {
        self.queues.clear();
    }

    /// The message as Zulip sends it; `markdown` renders the content (badly, but visibly).
    pub(crate) fn message_json(&self, message: &StoredMessage, markdown: bool) -> Value {
        let (content, content_type) = if markdown {
            (format!("<p>{}</p>", message.content), "text/html")
        } else {
            (message.content.clone(), "text/x-markdown")
        };
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        json!({
            "id": message.id,
            "sender_id": message.sender.id,
            "sender_email": message.sender.email,
            "sender_full_name": message.sender.full_name,
            "sender_realm_str": "fake",
            "content": content,
            "content_type": content_type,
            "subject": message.topic,
            "stream_id": self.stream_id(&message.stream),
            "type": "stream",
            "display_recipient": message.stream,
            "timestamp": timestamp,
            "recipient_id": 1000 + self.stream_id(&message.stream),
            "client": "fake",
            "reactions": [],
            "submessages": [],
            "topic_links": [],
            "is_me_message": false,
            "avatar_url": null,
        })
    }
}

/// Whether a narrow of `stream`/`topic` matches `message` under `topic_match`.
pub(crate) fn narrow_matches(
    topic_match: TopicMatch,
    stream: Option<&str>,
    topic: Option<&str>,
    message: &StoredMessage,
) -> bool {
    let stream_ok = stream.is_none_or(|s| s.to_lowercase() == message.stream.to_lowercase());
    let topic_ok = topic.is_none_or(|operand| {
        let operand = operand.to_lowercase();
        let topic = message.topic.to_lowercase();
        match topic_match {
            TopicMatch::Exact => operand == topic,
            TopicMatch::WordMatch => {
                operand == topic || topic.split_whitespace().any(|word| word == operand)
            }
            TopicMatch::StreamOnly => true,
        }
    });
    stream_ok && topic_ok
}

fn truncate_topic(topic: &str) -> String {
    if topic.chars().count() <= MAX_TOPIC {
        return topic.to_owned();
    }
    let kept: String = topic.chars().take(MAX_TOPIC - 3).collect();
    format!("{kept}...")
}

fn normalise_body(content: &str) -> String {
    content.trim_end().trim_start_matches('\n').to_owned()
}
