//! The one HTTP layer of tether's clients: the model endpoints, Zulip, Slack, Telegram, ntfy and
//! the webhook sink all build their client and read their failures here, so they verify
//! certificates, time out, back off and keep secrets out of messages the same way.
//!
//! - [`client`] builds a `reqwest::Client` from a [`ClientSpec`]: TLS with the ring provider
//!   and the platform verifier ([`tls`]), connect and request timeouts, and a user agent naming
//!   the client;
//! - [`describe`] turns a transport error into text without its URL (a URL may carry a token:
//!   Telegram's bot token is part of every path), with its causes;
//! - [`retry_after`] reads a server's `Retry-After` (seconds or an HTTP date), bounded, and
//!   [`requested_wait`] the wait a server asked for in its body or that header;
//! - [`base_url`] checks a configured server URL;
//! - [`snippet`] is the start of a body that is not what was expected, for an error;
//! - [`retry`] is when to try again: exponential backoff with equal jitter, the server's own
//!   wait on a rate limit, waits that end on cancellation or a deadline, and the chat clients'
//!   [`RetryPolicy`].
//!
//! Each client keeps its own error enum (its variants say what its caller can do) and its own
//! wire format; what every HTTP client needs lives here once.

#![deny(missing_docs)]

mod client;
pub mod retry;
pub mod tls;

pub use client::{
    ClientSpec, SetupError, base_url, chain, client, describe, requested_wait, retry_after, snippet,
};
pub use retry::{Backoff, RetryAfter, RetryPolicy, Retryable, Stopped, guarded, pause};
pub use tls::{TlsError, client_config};
