//! The `[telegram]` table as a configuration holds it, after the environment's overrides: what
//! tether-human's Telegram channel declares and reads (its declaration and read function live
//! beside the channel's descriptor), kept here because the client validates it
//! ([`crate::TelegramSettings::from_config`]).

use std::borrow::Cow;

use tether_config::{Config, NoticeKind, Secret};

/// The Telegram channel's settings (`[telegram]` plus environment), over Bot API long polling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The chat questions go to: a chat id such as `-1001234567890` or `@channelname`
    /// (`TELEGRAM_CHAT_ID` overrides).
    pub chat_id: Option<String>,
    /// The NAME of the variable holding the bot token (from BotFather).
    pub bot_token_env: String,
    /// The bot token, read from `bot_token_env` at load.
    pub bot_token: Option<Secret>,
    /// The Bot API's base URL (a test server's, in tests).
    pub api_url: String,
    /// The notices this channel gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl TelegramConfig {
    /// Default for `telegram.bot_token_env`.
    pub const DEFAULT_BOT_TOKEN_ENV: &'static str = "TELEGRAM_BOT_TOKEN";
    /// Variable overriding `telegram.chat_id`.
    pub const CHAT_ID_ENV: &'static str = "TELEGRAM_CHAT_ID";
    /// Default for `telegram.api_url`.
    pub const DEFAULT_API_URL: &'static str = "https://api.telegram.org";

    /// The `[telegram]` table of `config` (its defaults when `config` was read without it).
    pub fn of(config: &Config) -> Cow<'_, TelegramConfig> {
        config.integration::<TelegramConfig>()
    }
}

impl Default for TelegramConfig {
    fn default() -> Self {
        TelegramConfig {
            chat_id: None,
            bot_token_env: Self::DEFAULT_BOT_TOKEN_ENV.to_owned(),
            bot_token: None,
            api_url: Self::DEFAULT_API_URL.to_owned(),
            notify: None,
        }
    }
}
