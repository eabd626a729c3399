//! An ntfy client for tether's ntfy sink: publish to a topic, follow a reply topic.
//!
//! ntfy pushes to phones without an account or an app of tether's own, and its notifications
//! carry action buttons that make an HTTP request when pressed. tether uses that to answer a
//! question from a lock screen without being reachable itself: each button POSTs its choice to
//! a *reply topic* on the same server, and tether follows that topic as a client. So everything
//! here is outbound from tether's side:
//!
//! - [`NtfyClient::publish`]: a JSON publish to the server's root (`topic`, `title`, `message`,
//!   `priority`, `actions`), retried on 429 (honouring `Retry-After`), 5xx and network faults;
//! - [`Follower`]: the reply topic's `/<topic>/json` stream (NDJSON; `open` and `keepalive`
//!   events skipped), reconnecting after a dropped or silent stream with `since=<last message
//!   id>` so nothing published meanwhile is lost, deduplicating by message id so nothing is
//!   delivered twice, and backing off on 429 and 5xx.
//!
//! The access token (`Authorization: Bearer`) is a [`tether_config::Secret`]; it is sent as a
//! header only and never appears in an error or a log line.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod client;
mod error;
mod follow;
mod wire;

pub use client::{NtfyClient, RetryPolicy, http_client};
pub use error::NtfyError;
pub use follow::{FollowOptions, Follower};
pub use wire::{Action, Message, Publish};
