//! Asking a human: the broker, the interaction threshold, the cross-process notification path,
//! and the `ask_human` tool the agent calls.

pub mod asking;
pub mod broker;
pub mod channels;
pub mod notify;
pub mod terminal;
pub mod threshold;
pub mod tool;
pub mod zulip;

pub use broker::{Answer, Ask, Broker, BrokerError, Channel, ChannelAnswer, Timeout};
