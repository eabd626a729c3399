//! Test support for tether. **Dev-only**: depend on it from `[dev-dependencies]` only.
//!
//! - [`model_server`]: a real HTTP server on loopback that speaks the three model wire formats
//!   (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions) from a
//!   [`tether_model::scripted::Script`], records every request, and injects faults on demand.
//! - [`zulip_server`]: a real HTTP server on loopback that plays Zulip for a bot (messages,
//!   event queues with long-polls and heartbeats, narrows), lets a test post as a human, records
//!   every request, and injects faults on demand.
//! - [`slack_server`]: a fake Slack for a Socket Mode bot: the Web API on loopback HTTP and the
//!   Socket Mode WebSocket beside it (tickets, `hello`, envelopes and acks, each event to one
//!   socket), humans replying and pressing buttons, and faults on demand.
//! - [`telegram_server`]: a real HTTP server on loopback that plays the Telegram Bot API for a
//!   polling bot (chats, forum topics, inline keyboards, `getUpdates` with a confirming offset),
//!   lets a test reply and press buttons as a human, counts requests, and injects faults.
//! - [`ntfy_server`]: a real HTTP server on loopback that plays ntfy (JSON publish, a topic's
//!   NDJSON stream with `since=`, `poll=1`, keepalives, a token), lets a test press a
//!   notification's `http` action button as the phone would, and injects faults: 429 with
//!   `Retry-After`, 5xx, streams dropped mid-way, subscriptions held, duplicate message ids.
//! - [`capture`]: an in-memory writer for screens and logs, and a model script that records the
//!   requests it answers.
//! - [`webdriver`]: headless Chromium driven over WebDriver (`chromedriver`), for the
//!   dashboard's browser tests: open a page, type, click, run a script, take a screenshot.
//! - [`wait`]: [`wait_until`], the one way a test waits for something to happen — polling with a
//!   deadline, failing with an error that names what was awaited.
//!
//! Everything here fails with errors rather than panics, so a helper misused by a test reports
//! what went wrong through the test's own `unwrap`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capture;
pub mod model_server;
pub mod ntfy_server;
pub mod postgres;
mod serving;
pub mod slack_server;
pub mod telegram_server;
pub mod wait;
pub mod webdriver;
pub mod zulip_server;

pub use capture::{Captured, recording_script};

/// A scripted ACP agent (Python, newline-delimited JSON-RPC on stdio) for the ACP executor's
/// tests and benchmark: what it does on each prompt is read from the file `acp-mode` in the
/// session's directory (see the script's own docstring).
pub const SCRIPTED_ACP_AGENT: &str = include_str!("acp_agent.py");
pub use model_server::{FakeModelServer, Fault, RecordedRequest};
pub use ntfy_server::{FakeNtfyServer, NtfyFault, NtfyRoute};
pub use slack_server::FakeSlackServer;
pub use telegram_server::{FakeTelegramServer, TelegramFault};
pub use wait::{WaitTimeout, wait_until, wait_until_async};
pub use webdriver::{Browser, WebDriverError};
pub use zulip_server::{FakeZulipServer, ZulipFault};
