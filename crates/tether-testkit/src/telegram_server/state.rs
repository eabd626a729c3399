//! The fake Bot API's world: chats, every message posted (the bot's and the humans'), the
//! update queue with its confirming offset, forum topics, pressed buttons and answered callback
//! queries — the parts of Telegram a polling bot can observe.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Value, json};

use super::Method;

/// A Telegram user (a human, or the bot itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramUser {
    /// Its id.
    pub id: i64,
    /// Whether it is a bot.
    pub is_bot: bool,
    /// Its first name.
    pub first_name: String,
    /// Its username, if any.
    pub username: Option<String>,
}

impl TelegramUser {
    /// The `User` object.
    pub fn json(&self) -> Value {
        let mut user = json!({"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name});
        if let Some(name) = &self.username {
            user["username"] = json!(name);
        }
        user
    }
}

/// A chat the bot is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeChat {
    /// Its id (negative for groups).
    pub id: i64,
    /// `private`, `group` or `supergroup`.
    pub kind: &'static str,
    /// Whether it has forum topics.
    pub is_forum: bool,
}

/// A message as the fake stored it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The chat.
    pub chat_id: i64,
    /// Its id within the chat.
    pub message_id: i64,
    /// Who sent it.
    pub from: TelegramUser,
    /// Its text.
    pub text: String,
    /// The forum topic it is in.
    pub thread_id: Option<i64>,
    /// The message it replies to.
    pub reply_to: Option<i64>,
    /// Its inline keyboard (`reply_markup`), if it still has one.
    pub reply_markup: Option<Value>,
}

/// A button press a human made and whether the bot answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// The callback query id.
    pub id: String,
    /// The button's `callback_data`.
    pub data: String,
    /// Whether `answerCallbackQuery` was called for it.
    pub answered: bool,
}

pub(super) struct World {
    pub(super) bot: TelegramUser,
    pub(super) chats: BTreeMap<i64, FakeChat>,
    pub(super) messages: Vec<StoredMessage>,
    pub(super) updates: VecDeque<(i64, Value)>,
    pub(super) next_update: i64,
    pub(super) next_message: i64,
    pub(super) next_topic: i64,
    pub(super) topics: Vec<(i64, i64, String)>,
    pub(super) presses: Vec<Press>,
    pub(super) poll_generation: u64,
    pub(super) counts: BTreeMap<Method, usize>,
    pub(super) conflicts: usize,
}

impl World {
    pub(super) fn new(bot: TelegramUser, chats: Vec<FakeChat>) -> Self {
        World {
            bot,
            chats: chats.into_iter().map(|c| (c.id, c)).collect(),
            messages: Vec::new(),
            updates: VecDeque::new(),
            next_update: 9000,
            next_message: 1,
            next_topic: 100,
            topics: Vec::new(),
            presses: Vec::new(),
            poll_generation: 0,
            counts: BTreeMap::new(),
            conflicts: 0,
        }
    }

    /// The `Chat` object of `chat_id`.
    pub(super) fn chat_json(&self, chat_id: i64) -> Value {
        match self.chats.get(&chat_id) {
            Some(c) => {
                let mut chat = json!({"id": c.id, "type": c.kind});
                if c.kind != "private" {
                    chat["title"] = json!("tether questions");
                }
                if c.is_forum {
                    chat["is_forum"] = json!(true);
                }
                chat
            }
            None => json!({"id": chat_id, "type": "supergroup", "title": "elsewhere"}),
        }
    }

    /// The `Message` object of a stored message.
    pub(super) fn message_json(&self, m: &StoredMessage) -> Value {
        let mut message = json!({
            "message_id": m.message_id,
            "from": m.from.json(),
            "chat": self.chat_json(m.chat_id),
            "date": 1_700_000_000 + m.message_id,
            "text": m.text,
        });
        if let Some(thread) = m.thread_id {
            message["message_thread_id"] = json!(thread);
            message["is_topic_message"] = json!(true);
        }
        if let Some(to) = m.reply_to
            && let Some(parent) = self
                .messages
                .iter()
                .find(|p| p.chat_id == m.chat_id && p.message_id == to)
        {
            let parent = StoredMessage {
                reply_to: None,
                ..parent.clone()
            };
            message["reply_to_message"] = self.message_json(&parent);
        }
        if let Some(markup) = &m.reply_markup {
            message["reply_markup"] = markup.clone();
        }
        message
    }

    /// Stores a message and returns its id (ids are per server, which is enough for a fake).
    pub(super) fn store(&mut self, mut m: StoredMessage) -> StoredMessage {
        m.message_id = self.next_message;
        self.next_message += 1;
        self.messages.push(m.clone());
        m
    }

    /// Queues an update carrying `kind: payload`.
    pub(super) fn enqueue(&mut self, kind: &str, payload: Value) -> i64 {
        let id = self.next_update;
        self.next_update += 1;
        self.updates
            .push_back((id, json!({"update_id": id, kind: payload})));
        id
    }

    pub(super) fn find(&self, chat_id: i64, message_id: i64) -> Option<&StoredMessage> {
        self.messages
            .iter()
            .find(|m| m.chat_id == chat_id && m.message_id == message_id)
    }
}
