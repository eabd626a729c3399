//! The `[slack]` table as a configuration holds it, after the environment's overrides: what
//! tether-human's Slack channel declares and reads (its declaration and read function live
//! beside the channel's descriptor), kept here because the client validates it
//! ([`crate::SlackSettings::from_config`]).

use std::borrow::Cow;

use tether_config::{Config, NoticeKind, Secret};

/// The Slack channel's settings (`[slack]` plus environment), over Socket Mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackConfig {
    /// The channel questions are posted to: its id (`C0123ABCD`, from the channel's details in
    /// Slack; `SLACK_CHANNEL` overrides). A name is not enough: threads are read by id.
    pub channel: Option<String>,
    /// The NAME of the variable holding the bot token (`xoxb-…`).
    pub bot_token_env: String,
    /// The NAME of the variable holding the app-level token (`xapp-…`, `connections:write`).
    pub app_token_env: String,
    /// The bot token, read from `bot_token_env` at load.
    pub bot_token: Option<Secret>,
    /// The app-level token, read from `app_token_env` at load.
    pub app_token: Option<Secret>,
    /// The Web API's base URL (a test server's, in tests).
    pub api_url: String,
    /// The notices this channel gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl SlackConfig {
    /// Default for `slack.bot_token_env`.
    pub const DEFAULT_BOT_TOKEN_ENV: &'static str = "SLACK_BOT_TOKEN";
    /// Default for `slack.app_token_env`.
    pub const DEFAULT_APP_TOKEN_ENV: &'static str = "SLACK_APP_TOKEN";
    /// Variable overriding `slack.channel`.
    pub const CHANNEL_ENV: &'static str = "SLACK_CHANNEL";
    /// Default for `slack.api_url`.
    pub const DEFAULT_API_URL: &'static str = "https://slack.com/api";

    /// The `[slack]` table of `config` (its defaults when `config` was read without it).
    pub fn of(config: &Config) -> Cow<'_, SlackConfig> {
        config.integration::<SlackConfig>()
    }
}

impl Default for SlackConfig {
    fn default() -> Self {
        SlackConfig {
            channel: None,
            bot_token_env: Self::DEFAULT_BOT_TOKEN_ENV.to_owned(),
            app_token_env: Self::DEFAULT_APP_TOKEN_ENV.to_owned(),
            bot_token: None,
            app_token: None,
            api_url: Self::DEFAULT_API_URL.to_owned(),
            notify: None,
        }
    }
}
