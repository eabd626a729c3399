//! The `[zulip]` table as a configuration holds it, after the environment's overrides: what
//! tether-human's Zulip channel declares and reads (its declaration and read function live
//! beside the channel's descriptor), kept here because the client validates it
//! ([`crate::ZulipSettings::from_config`]).

use std::borrow::Cow;

use tether_config::{Config, NoticeKind, Secret};

/// The Zulip channel's settings, after the environment's overrides (`[zulip]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZulipConfig {
    /// The server, e.g. `https://chat.example.com` (`ZULIP_SERVER_URL` overrides).
    pub server_url: Option<String>,
    /// The bot's email address (`ZULIP_BOT_EMAIL` overrides).
    pub bot_email: Option<String>,
    /// The stream questions are posted to (`ZULIP_STREAM` overrides).
    pub stream: Option<String>,
    /// The NAME of the variable holding the bot's API key.
    pub api_key_env: String,
    /// The bot's API key, read from `api_key_env` at load; `None` when unset.
    pub api_key: Option<Secret>,
    /// The notices this channel gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl ZulipConfig {
    /// Default for `zulip.api_key_env`.
    pub const DEFAULT_API_KEY_ENV: &'static str = "ZULIP_BOT_API_KEY";
    /// Variable overriding `zulip.server_url`.
    pub const SERVER_URL_ENV: &'static str = "ZULIP_SERVER_URL";
    /// Variable overriding `zulip.bot_email`.
    pub const BOT_EMAIL_ENV: &'static str = "ZULIP_BOT_EMAIL";
    /// Variable overriding `zulip.stream`.
    pub const STREAM_ENV: &'static str = "ZULIP_STREAM";

    /// The `[zulip]` table of `config` (its defaults when `config` was read without it).
    pub fn of(config: &Config) -> Cow<'_, ZulipConfig> {
        config.integration::<ZulipConfig>()
    }
}

impl Default for ZulipConfig {
    fn default() -> Self {
        Self {
            server_url: None,
            bot_email: None,
            stream: None,
            api_key_env: Self::DEFAULT_API_KEY_ENV.to_owned(),
            api_key: None,
            notify: None,
        }
    }
}
