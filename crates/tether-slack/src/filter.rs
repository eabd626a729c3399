//! Which messages and button presses answer a question: a human's message in the question's
//! thread newer than the question, or a press of one of the question's own buttons.
//!
//! The bot's own messages (its `bot_id` or its user), edits and deletions (`message_changed`,
//! `message_deleted`), other channels and other threads never answer. Replies are taken oldest
//! first by `ts`, whatever order they arrived in, so duplicates and reordering change nothing.

use crate::wire::{BotIdentity, ButtonPress, Incoming, Message, Ts};

/// The `action_id` of option `index`'s button.
pub fn option_action_id(index: usize) -> String {
    format!("tether_option_{index}")
}

/// The human's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyBody {
    /// A message in the thread, unescaped (`&lt;` back to `<`).
    Text(String),
    /// A press of option `index`'s button.
    Choice(usize),
}

/// A human's answer to a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// What they answered.
    pub body: ReplyBody,
    /// Their user id (`U…`).
    pub user: String,
    /// Their name, when Slack said it (button presses carry it; messages do not).
    pub user_name: Option<String>,
    /// The reply message's ts (`None` for a button press).
    pub ts: Option<Ts>,
}

impl Reply {
    /// Who answered, for people: the name when known, else the user id.
    pub fn responder(&self) -> &str {
        self.user_name.as_deref().unwrap_or(&self.user)
    }
}

/// Decides what answers one question.
#[derive(Debug, Clone)]
pub(crate) struct ReplyFilter {
    pub(crate) channel: String,
    pub(crate) thread: Ts,
    pub(crate) question: Ts,
    pub(crate) options: usize,
    pub(crate) bot: BotIdentity,
}

impl ReplyFilter {
    /// The answer `incoming` gives, if any.
    pub(crate) fn accept(&self, incoming: &Incoming) -> Option<Reply> {
        match incoming {
            Incoming::Message(m) if m.channel.as_deref() == Some(self.channel.as_str()) => {
                self.reply(m)
            }
            Incoming::Message(_) => None,
            Incoming::Button(b) => self.press(b),
        }
    }

    /// The oldest reply among `messages` (a thread read with `conversations.replies`).
    pub(crate) fn first_reply(&self, messages: &[Message]) -> Option<Reply> {
        messages
            .iter()
            .filter_map(|m| self.reply(m))
            .min_by(|a, b| a.ts.cmp(&b.ts))
    }

    fn reply(&self, m: &Message) -> Option<Reply> {
        let ts = m.ts()?;
        let human = m.bot_id.is_none()
            && m.user.as_deref().is_some_and(|u| u != self.bot.user_id)
            && matches!(m.subtype.as_deref(), None | Some("thread_broadcast"));
        let text = m.text.trim();
        if !human || text.is_empty() || m.thread()? != self.thread || ts <= self.question {
            return None;
        }
        Some(Reply {
            body: ReplyBody::Text(unescape(text)),
            user: m.user.clone()?,
            user_name: None,
            ts: Some(ts),
        })
    }

    fn press(&self, b: &ButtonPress) -> Option<Reply> {
        if b.channel != self.channel || b.message_ts != self.question || b.user == self.bot.user_id
        {
            return None;
        }
        let index: usize = b.action_id.strip_prefix("tether_option_")?.parse().ok()?;
        (index < self.options).then(|| Reply {
            body: ReplyBody::Choice(index),
            user: b.user.clone(),
            user_name: b.user_name.clone(),
            ts: None,
        })
    }
}

/// Slack escapes `&`, `<` and `>` in message text; the answer is stored as typed.
pub fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
