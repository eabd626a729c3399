//! The `tether.toml` table of each channel and notice sink, declared once beside its descriptor
//! ([`crate::registry::ChannelDef::settings`]): its keys with their descriptions and template
//! lines, which name a secret's variable (kept from every child) or are a credential (hidden
//! from a run's record), which a variable overrides, and the function reading it into the
//! channel's own settings. tether-config reads, checks and documents each table from its
//! declaration ([`tether_config::TableDecl`]); the channel reads its settings back typed
//! (`ZulipConfig::of(&config)`).
//!
//! The chat services' settings types live in their client crates (`tether_zulip::ZulipConfig`,
//! which the client validates); the sinks' here.

pub mod email;
pub mod notify_command;
pub mod ntfy;
pub mod slack;
pub mod telegram;
pub mod webhook;
pub mod zulip;

use tether_config::KeyDecl;

/// A channel's own `notify = [...]`, described as `doc` (`The notices posted in the stream,
/// when not [notify] on.`), with `example` in the template.
pub(crate) const fn notify(doc: &'static str, example: &'static str) -> KeyDecl {
    KeyDecl::new("notify", doc, example, "[\"signed_off\"]")
}
