//! A lossless Zulip bot client for tether's `ask_human`: one topic per conversation, the question
//! posted by the bot, the first human reply returned — however long it takes, and without losing
//! a reply when Zulip drops the event queue.
//!
//! The flow:
//!
//! 1. [`ZulipClient::post_question`] registers an event queue narrowed to the stream and topic
//!    **first**, then posts the question, so a reply between the post and the first poll is
//!    already in the queue. The returned [`PendingReply`] exposes the posted message id at once,
//!    for the caller to persist before waiting.
//! 2. [`PendingReply::wait`] long-polls (one request per server long-poll timeout), filters out
//!    the bot's own messages and anything not exactly in the topic, deduplicates by message id,
//!    and on `BAD_EVENT_QUEUE_ID` re-registers and fetches the replies posted meanwhile with
//!    `GET /messages`, from the question's id.
//! 3. After a crash, [`ZulipClient::resume`] waits for a question already posted, never posting
//!    it again.
//!
//! The queue is deregistered on a reply, on cancellation, and (best effort) when a
//! [`PendingReply`] is dropped. The API key is never logged nor put in an error.
//!
//! [`ZulipApi`] is the low level: one HTTP request per call, typed [`ZulipError`]s.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod client;
mod config;
mod error;
mod filter;
mod format;
mod pending;
mod queue;
mod retry;
mod settings;
mod topic;
mod wire;

pub use api::{ApiOptions, MessagesPage, RegisteredQueue, ZulipApi};
pub use client::{ClientOptions, ZulipClient};
pub use config::ZulipConfig;
pub use error::ZulipError;
pub use format::{QuestionMessage, answered_elsewhere_note};
pub use pending::{PendingReply, Reply};
pub use retry::RetryPolicy;
pub use settings::{ConfigError, MissingValue, ZulipSettings};
pub use topic::{MAX_TOPIC_CHARS, topic_name};
pub use wire::{BotIdentity, Event, Message, MessageId};
