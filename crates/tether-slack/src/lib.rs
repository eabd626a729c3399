//! A lossless Slack bot client for tether's `ask_human`: a question is a message in one channel
//! (with a button per option), its thread is the conversation, and the first human reply in the
//! thread — or press of one of its buttons — is the answer, however long it takes and whatever
//! happens to the connection meanwhile.
//!
//! # Why it is built this way
//!
//! - **Socket Mode, not the Events API.** Socket Mode needs no public URL: the app dials out
//!   over a WebSocket (`apps.connections.open` with the app-level `xapp-` token, then `hello`),
//!   so tether works from a laptop or a CI box. Envelopes are acknowledged (`{"envelope_id"}`)
//!   at once, well within Slack's 3 s.
//! - **The thread is the truth, the socket only a wake-up.** Slack drops events when no socket
//!   is open, retries unacknowledged ones, may reorder them, and closes sockets whenever it
//!   likes (`disconnect`: `refresh_requested`, `warning`, …; or a dropped TCP connection). So
//!   after **every** `hello` each waiter reads its thread with `conversations.replies` from its
//!   question on ([`PendingReply`]), and answers are chosen by `ts` (parsed as two integers),
//!   oldest first: a reply posted while disconnected is found, a duplicate changes nothing.
//!   While the socket is up **no HTTP request is made**: waiting costs one WebSocket and a
//!   ping every 5 s (a socket silent for 30 s is half-open and is redialled).
//! - **One socket per process** ([`SlackClient`] clones share it), opened while anyone waits.
//!   Slack hands each event to only **one** of an app's sockets, so with several tether
//!   processes on one app (a run, `tether mcp` in an editor, a `tether ask`) an event can reach
//!   a process that does not wait on that thread: [`SlackClient::on_unclaimed`] passes it to
//!   the caller, which stores the answer where its waiter will see it. Typed replies would also
//!   be found on the waiter's next catch-up; button presses leave no history, so routing them
//!   matters.
//! - **Never posting twice.** A post carries a random nonce in its `metadata`; after a failure
//!   that may hide a stored post (a 5xx, a lost response) the channel or thread is searched
//!   for that nonce before posting again. After a crash the caller resumes with
//!   [`SlackClient::pending`] on the recorded thread and ts: nothing is posted.
//! - **Rate limits and outages.** HTTP 429 waits Slack's `Retry-After` (plus jitter); 5xx and
//!   transport failures back off exponentially (0.5 s doubling to 60 s). Before the question is
//!   posted a few retries are allowed; once posted, waiting retries without limit.
//! - **Tokens never leak.** Both tokens travel only in an `Authorization` header marked
//!   sensitive; the socket URL (a one-time ticket) is never logged; `Debug` of the settings
//!   hides the tokens; errors keep Slack's error codes, never a request.
//!
//! [`SlackApi`] is the low level: one HTTP request per call, typed [`SlackError`]s.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod client;
mod config;
mod error;
mod filter;
mod format;
mod hub;
mod pending;
mod retry;
mod settings;
mod socket;
mod wire;

pub use api::{ApiOptions, MessagesPage, OutgoingMessage, Posted, SlackApi, SocketUrl};
pub use client::{ClientOptions, SlackClient};
pub use config::SlackConfig;
pub use error::SlackError;
pub use filter::{Reply, ReplyBody, option_action_id, unescape};
pub use format::{QuestionMessage, answered_note, escape};
pub use hub::UnclaimedHandler;
pub use pending::{PendingReply, Thread};
pub use retry::RetryPolicy;
pub use settings::{
    ConfigError, DEFAULT_API_URL, DEFAULT_APP_TOKEN_ENV, DEFAULT_BOT_TOKEN_ENV, MissingValue,
    RawSlackSettings, SlackSettings,
};
pub use socket::SocketOptions;
pub use wire::{BotIdentity, ButtonPress, Incoming, Message, Ts};
