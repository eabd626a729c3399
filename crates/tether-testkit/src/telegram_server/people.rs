//! The fake Bot API's human side: what a test does as the people in the chat — reply, write in
//! a chat or topic, press a button — and the time-bound things Telegram does on its own (a press
//! expiring, update ids jumping).

use serde_json::json;

use super::FakeTelegramServer;
use super::state::{Press, StoredMessage, TelegramUser};

impl FakeTelegramServer {
    /// Alice, a human.
    pub fn alice(&self) -> TelegramUser {
        TelegramUser {
            id: 501,
            is_bot: false,
            first_name: "Alice".into(),
            username: Some("alice".into()),
        }
    }

    /// Bob, another human.
    pub fn bob(&self) -> TelegramUser {
        TelegramUser {
            id: 502,
            is_bot: false,
            first_name: "Bob".into(),
            username: None,
        }
    }

    /// `from` replies to the message `to` in `chat` (in its topic, if it is in one); returns
    /// the reply's message id.
    pub fn reply(&self, from: &TelegramUser, chat: i64, to: i64, text: &str) -> i64 {
        let thread = self.shared.world().find(chat, to).and_then(|m| m.thread_id);
        self.deliver(from, chat, thread, Some(to), text)
    }

    /// `from` writes `text` in `chat` (in the topic `thread`, if given), replying to nothing.
    /// As in Telegram, a message in a topic still carries the topic's first message (the
    /// `forum_topic_created` service message) as its `reply_to_message`.
    pub fn post(&self, from: &TelegramUser, chat: i64, thread: Option<i64>, text: &str) -> i64 {
        let opener = thread.and_then(|thread| {
            let w = self.shared.world();
            w.messages
                .iter()
                .find(|m| m.chat_id == chat && m.thread_id == Some(thread))
                .map(|m| m.message_id)
        });
        self.deliver(from, chat, thread, opener, text)
    }

    /// An update carrying a message of the bot itself replying to `to` (Telegram never sends
    /// these, apart from service messages; a client must ignore them all the same).
    pub fn post_as_bot(&self, chat: i64, to: Option<i64>, text: &str) -> i64 {
        let bot = self.shared.world().bot.clone();
        let thread = to.and_then(|to| self.shared.world().find(chat, to).and_then(|m| m.thread_id));
        self.deliver(&bot, chat, thread, to, text)
    }

    fn deliver(
        &self,
        from: &TelegramUser,
        chat: i64,
        thread: Option<i64>,
        reply_to: Option<i64>,
        text: &str,
    ) -> i64 {
        let mut w = self.shared.world();
        let stored = w.store(StoredMessage {
            chat_id: chat,
            message_id: 0,
            from: from.clone(),
            text: text.into(),
            thread_id: thread,
            reply_to,
            reply_markup: None,
        });
        let json = w.message_json(&stored);
        w.enqueue("message", json);
        drop(w);
        self.shared.bump();
        stored.message_id
    }

    /// `from` presses the inline button carrying `data` under the message `message` of `chat`;
    /// returns the callback query id.
    pub fn press(&self, from: &TelegramUser, chat: i64, message: i64, data: &str) -> String {
        let mut w = self.shared.world();
        let id = format!("cbq-{}", w.presses.len() + 1);
        let message_json = w
            .find(chat, message)
            .cloned()
            .map(|m| w.message_json(&m))
            .unwrap_or_else(
                || json!({"message_id": message, "chat": w.chat_json(chat), "date": 0}),
            );
        let query = json!({
            "id": id,
            "from": from.json(),
            "message": message_json,
            "chat_instance": "-5300000000000",
            "data": data,
        });
        w.enqueue("callback_query", query);
        w.presses.push(Press {
            id: id.clone(),
            data: data.into(),
            answered: false,
        });
        drop(w);
        self.shared.bump();
        id
    }

    /// Drops every unconfirmed button press, as Telegram does 150 s after it was made (a
    /// message is kept 24 h); returns how many.
    pub fn expire_presses(&self) -> usize {
        let mut w = self.shared.world();
        let before = w.updates.len();
        w.updates.retain(|(_, u)| u.get("callback_query").is_none());
        before - w.updates.len()
    }

    /// Makes the next update ids jump ahead by `by` (Telegram's ids are sequential, but
    /// random after a week of silence).
    pub fn jump_update_ids(&self, by: i64) {
        self.shared.world().next_update += by;
    }
}
