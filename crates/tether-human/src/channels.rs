//! The channels a question is offered on besides the store, built from `[human]` and `[zulip]`.
//!
//! Misconfiguration never stops anything: a channel that cannot be set up is left
//! out and its problem, naming exactly what is missing, is kept for `ask_human` to report as a
//! tool error. The terminal is not built here: only the caller knows whether its stdin is a
//! person (a TTY) or a protocol (`tether mcp`).

use std::sync::Arc;
use std::time::Duration;

use tether_config::Config;

use super::broker::{Channel, Timeout};
use super::zulip::Zulip;
use tether_store::Journal;

/// The channels that work, and what is wrong with the others.
#[derive(Default)]
pub struct HumanChannels {
    /// Channels ready to offer questions.
    pub channels: Vec<Arc<dyn Channel>>,
    /// One line per channel that could not be set up, naming what to fix.
    pub problems: Vec<String>,
}

/// Zulip when `human.channels` lists it (recording its posts in `journal`'s store).
pub fn from_config(config: &Config, journal: &Journal) -> HumanChannels {
    let mut out = HumanChannels::default();
    if config
        .human
        .channels
        .contains(&tether_config::Channel::Zulip)
    {
        match tether_zulip::ZulipClient::from_config(&config.zulip) {
            Ok(client) => out
                .channels
                .push(Arc::new(Zulip::new(client, journal.clone()))),
            Err(e) => {
                tracing::warn!(error = %e, "the zulip channel is off");
                out.problems.push(e.to_string());
            }
        }
    }
    out
}

/// The broker's deadline from `human.timeout_secs` and `human.on_timeout`, if set.
pub fn timeout(config: &Config) -> Option<Timeout> {
    config.human.timeout.as_ref().map(|t| Timeout {
        after: Duration::from_secs(t.secs),
        answer: t.on_timeout.clone(),
    })
}
