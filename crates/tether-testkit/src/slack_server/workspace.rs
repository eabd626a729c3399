//! The fake workspace's state: channels of messages with Slack's `ts` ids (strictly increasing,
//! unique per channel), threads by `thread_ts`, and the paging of `conversations.replies`.

use serde_json::{Value, json};

/// A message as the fake stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// The channel's ID.
    pub channel: String,
    /// Its ts.
    pub ts: String,
    /// The author's user id.
    pub user: String,
    /// The bot's id when a bot posted it.
    pub bot_id: Option<String>,
    /// The text.
    pub text: String,
    /// The thread's parent, for a reply (and for a parent that has replies).
    pub thread_ts: Option<String>,
    /// Block Kit blocks (`null` when none).
    pub blocks: Value,
    /// `metadata` as posted.
    pub metadata: Option<Value>,
    /// How many times `chat.update` changed it.
    pub edits: u32,
}

impl StoredMessage {
    /// The message as the Web API and events show it.
    pub fn to_json(&self) -> Value {
        let mut m = json!({"type": "message", "user": self.user, "text": self.text, "ts": self.ts});
        if let Some(bot) = &self.bot_id {
            m["bot_id"] = json!(bot);
        }
        if let Some(thread) = &self.thread_ts {
            m["thread_ts"] = json!(thread);
        }
        if !self.blocks.is_null() {
            m["blocks"] = self.blocks.clone();
        }
        if let Some(metadata) = &self.metadata {
            m["metadata"] = metadata.clone();
        }
        m
    }
}

/// A message about to be stored.
pub(crate) struct Draft<'a> {
    pub(crate) channel: &'a str,
    pub(crate) user: &'a str,
    pub(crate) bot_id: Option<&'a str>,
    pub(crate) text: &'a str,
    pub(crate) thread_ts: Option<&'a str>,
    pub(crate) blocks: Value,
    pub(crate) metadata: Option<Value>,
}

#[derive(Debug)]
pub(crate) struct Workspace {
    pub(crate) messages: Vec<StoredMessage>,
    base_secs: u64,
    counter: u64,
    pub(crate) channels: Vec<String>,
}

impl Workspace {
    pub(crate) fn new(channels: Vec<String>) -> Self {
        let base_secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(1_700_000_000);
        Workspace {
            messages: Vec::new(),
            base_secs,
            counter: 0,
            channels,
        }
    }

    fn next_ts(&mut self) -> String {
        self.counter += 100;
        format!(
            "{}.{:06}",
            self.base_secs + self.counter / 1_000_000,
            self.counter % 1_000_000
        )
    }

    /// Stores a message and returns it.
    pub(crate) fn post(&mut self, draft: Draft<'_>) -> StoredMessage {
        let ts = self.next_ts();
        let (channel, thread_ts) = (draft.channel, draft.thread_ts);
        if let Some(thread) = thread_ts
            && let Some(parent) = self
                .messages
                .iter_mut()
                .find(|m| m.channel == channel && m.ts == thread)
        {
            parent.thread_ts = Some(thread.to_owned());
        }
        let message = StoredMessage {
            channel: channel.to_owned(),
            ts,
            user: draft.user.to_owned(),
            bot_id: draft.bot_id.map(str::to_owned),
            text: draft.text.to_owned(),
            thread_ts: thread_ts.map(str::to_owned),
            blocks: draft.blocks,
            metadata: draft.metadata,
            edits: 0,
        };
        self.messages.push(message.clone());
        message
    }

    pub(crate) fn find_mut(&mut self, channel: &str, ts: &str) -> Option<&mut StoredMessage> {
        self.messages
            .iter_mut()
            .find(|m| m.channel == channel && m.ts == ts)
    }

    /// The thread `thread` of `channel` (parent first), or `None` when there is no such message.
    pub(crate) fn thread(&self, channel: &str, thread: &str) -> Option<Vec<&StoredMessage>> {
        let parent = self
            .messages
            .iter()
            .find(|m| m.channel == channel && m.ts == thread)?;
        let mut all = vec![parent];
        all.extend(self.messages.iter().filter(|m| {
            m.channel == channel && m.ts != thread && m.thread_ts.as_deref() == Some(thread)
        }));
        Some(all)
    }

    /// The top-level messages of `channel`, newest first.
    pub(crate) fn history(&self, channel: &str) -> Vec<&StoredMessage> {
        let mut top: Vec<&StoredMessage> = self
            .messages
            .iter()
            .filter(|m| m.channel == channel && m.thread_ts.as_deref().is_none_or(|t| t == m.ts))
            .collect();
        top.reverse();
        top
    }

    pub(crate) fn channel_exists(&self, channel: &str) -> bool {
        self.channels.iter().any(|c| c == channel)
    }
}

/// Orders two ts strings as Slack does (seconds, then the fraction).
pub(crate) fn ts_key(ts: &str) -> (u64, u64) {
    let (secs, frac) = ts.split_once('.').unwrap_or((ts, "0"));
    let frac = format!("{frac:0<9}");
    (
        secs.parse().unwrap_or(0),
        frac.get(..9).and_then(|f| f.parse().ok()).unwrap_or(0),
    )
}

/// A page of `messages` starting at `cursor` (an offset), and the next cursor.
pub(crate) fn page<T: Clone>(
    messages: &[T],
    cursor: Option<&str>,
    limit: usize,
) -> (Vec<T>, Option<String>) {
    let start = cursor
        .and_then(|c| c.strip_prefix("offset:"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(messages.len());
    let end = (start + limit.max(1)).min(messages.len());
    let next = (end < messages.len()).then(|| format!("offset:{end}"));
    (messages[start..end].to_vec(), next)
}
