//! A lossless Telegram Bot API client for tether's `ask_human`: a question is a message in the
//! configured chat (options as an inline keyboard), and a reply to that message — or a press of
//! one of its buttons — is the answer.
//!
//! Why it is built this way:
//!
//! - **Long polling, not a webhook**: no public URL is needed. Telegram allows only one
//!   `getUpdates` poller per bot token (a second gets 409 Conflict), yet several tether
//!   processes (a run, `tether mcp` in an editor, a `tether ask` in a script) may wait at once.
//!   So one process per bot per machine polls — whoever holds an `flock` on a file in the
//!   per-user [`Registry`] — and every waiter registers its post there (chat and message id →
//!   workspace and question). The poller records a reply in the asking workspace's store, whose
//!   waiters are woken; processes that do not poll wait on their store and try the lock every
//!   so often, so when the poller exits another takes over.
//! - **Offsets confirmed only after storing**: the next `getUpdates` call's `offset` confirms
//!   an update only once its answer is stored, so a crash re-delivers rather than loses. A
//!   poller starts without an offset (Telegram's oldest unconfirmed update); a re-delivered
//!   reply finds its question answered (the store's first answer wins), so nothing doubles.
//! - **A forum topic per conversation where the chat has topics, else a reply chain**: in a
//!   supergroup with topics (`getChat` says `is_forum`; the bot must be an admin allowed to
//!   manage topics) a conversation opens its own topic and any message in it answers; elsewhere
//!   replies are matched on `reply_to_message`, which works in private chats, groups and
//!   supergroups alike, and a follow-up replies to the conversation's first question. In a
//!   private chat a plain message answers the chat's one waiting question.
//! - **The token stays secret**: it is part of every URL, so URLs are never logged and reqwest
//!   errors are stripped of theirs; the registry is keyed by the bot id (the token's public
//!   digits before `:`).
//! - Faults: 429 waits `parameters.retry_after`; 409, 5xx and network faults back off
//!   exponentially with jitter; the poll itself retries forever (a human may answer hours
//!   later).

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod client;
mod config;
mod error;
mod format;
mod poller;
mod registry;
mod retry;
mod settings;
mod wire;

pub use api::{ApiOptions, Button, TelegramApi};
pub use client::{ClientOptions, TelegramClient};
pub use config::TelegramConfig;
pub use error::TelegramError;
pub use format::{
    MAX_TEXT_CHARS, QuestionMessage, answered_elsewhere_note, callback_data, parse_callback_data,
};
pub use poller::{Deliver, Delivered, Reply};
pub use registry::{COPY_WINDOW_SECS, OFFSET_MAX_AGE, PollerLock, Registry, WaitingPost};
pub use retry::RetryPolicy;
pub use settings::{ConfigError, MissingValue, TelegramSettings};
pub use wire::{CallbackQuery, Chat, Message, Update, User};
