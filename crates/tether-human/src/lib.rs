//! Asking a human, and never losing the answer.
//!
//! A question is stored first (pending), then offered on every channel at once — the terminal,
//! Zulip, and the store itself, which `tether answer` writes to from any shell — and the first
//! answer wins ([`broker`]). Waiters in other processes are woken through a per-workspace
//! notification socket ([`notify`]). The interaction threshold answers confident questions
//! without bothering anyone ([`threshold`]); [`asking`] is the `ask_human` behaviour shared by
//! the built-in agent's tool ([`tool`]) and the MCP server; [`prompts`] holds every text a model
//! reads about it.
//!
//! This crate sits below the loops and knows nothing of executors: the loops, `tether ask`,
//! `tether mcp` and the demo all get their broker from the same constructor.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod asking;
pub mod broker;
pub mod channels;
pub mod notify;
pub mod prompts;
pub mod terminal;
pub mod threshold;
pub mod tool;
pub mod zulip;

pub use broker::{Answer, Ask, Broker, BrokerError, Channel, ChannelAnswer, Timeout};
