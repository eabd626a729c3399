//! Which delivered messages count as the human's reply to one question.
//!
//! Zulip's narrows can match more loosely than asked (current main also matches a topic by any
//! of its words), events are delivered at least once, and the bot's own messages
//! come back through its own queue. So every message is re-checked here: newer than the
//! question, not from the bot, in the stream, and in exactly the topic (compared the way
//! released servers compare topics: case-insensitively, the whole string).

use std::collections::HashSet;

use crate::wire::{Message, MessageId};

#[derive(Debug, Clone)]
pub(crate) struct ReplyFilter {
    stream: String,
    topic: String,
    bot_user_id: u64,
    bot_email: String,
    after: MessageId,
    seen: HashSet<MessageId>,
}

impl ReplyFilter {
    pub(crate) fn new(
        stream: &str,
        topic: &str,
        bot_user_id: u64,
        bot_email: &str,
        after: MessageId,
    ) -> Self {
        Self {
            stream: fold(stream),
            topic: fold(topic),
            bot_user_id,
            bot_email: fold(bot_email),
            after,
            seen: HashSet::new(),
        }
    }

    pub(crate) fn set_after(&mut self, after: MessageId) {
        self.after = after;
    }

    /// Whether `message` is the bot's own message in exactly this topic.
    pub(crate) fn is_own_in_topic(&self, message: &Message) -> bool {
        self.is_from_bot(message) && self.is_in_topic(message)
    }

    /// The earliest acceptable reply among `messages` not seen before; marks all as seen.
    pub(crate) fn first_reply<'a>(
        &mut self,
        messages: impl IntoIterator<Item = &'a Message>,
    ) -> Option<Message> {
        let mut best: Option<&Message> = None;
        for message in messages {
            if !self.seen.insert(message.id) {
                continue;
            }
            if self.accepts(message) && best.is_none_or(|b| message.id < b.id) {
                best = Some(message);
            }
        }
        best.cloned()
    }

    fn accepts(&self, message: &Message) -> bool {
        message.id > self.after && !self.is_from_bot(message) && self.is_in_topic(message)
    }

    fn is_from_bot(&self, message: &Message) -> bool {
        message.sender_id == self.bot_user_id || fold(&message.sender_email) == self.bot_email
    }

    fn is_in_topic(&self, message: &Message) -> bool {
        message
            .stream_name()
            .is_some_and(|stream| fold(stream) == self.stream)
            && fold(&message.subject) == self.topic
    }
}

fn fold(text: &str) -> String {
    text.trim().to_lowercase()
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
