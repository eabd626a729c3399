//! Validated Slack settings: the channel from `[slack]`, the two tokens from the environment
//! variables `[slack]` names.
//!
//! Misconfiguration must never crash anything: every problem becomes a [`ConfigError`] that
//! names each missing value and the variable (or `tether.toml` key) that would set it, so the
//! `ask_human` tool can hand the agent (and the human reading the log) a clear fix.

pub use tether_config::MissingSetting as MissingValue;
use tether_config::{Secret, given, given_secret};

use crate::SlackConfig;

/// The variable the bot token is read from unless `[slack] bot_token_env` names another.
pub const DEFAULT_BOT_TOKEN_ENV: &str = "SLACK_BOT_TOKEN";
/// The variable the app-level token is read from unless `[slack] app_token_env` names another.
pub const DEFAULT_APP_TOKEN_ENV: &str = "SLACK_APP_TOKEN";
/// Slack's Web API.
pub const DEFAULT_API_URL: &str = "https://slack.com/api";

/// Everything the client needs to talk to Slack. `Debug` never shows a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackSettings {
    /// The Web API's base URL (`https://slack.com/api`), without a trailing slash.
    pub api_url: String,
    /// The bot token (`xoxb-…`): posting, reading threads, `auth.test`.
    pub bot_token: Secret,
    /// The app-level token (`xapp-…`, scope `connections:write`): opening Socket Mode.
    pub app_token: Secret,
    /// The channel's ID (`C…` or `G…`) questions are posted to.
    pub channel: String,
}

/// The values [`SlackSettings::new`] validates, each as given (tokens read from the environment
/// by the caller), with the names that set them for the error messages.
#[derive(Debug, Clone, Default)]
pub struct RawSlackSettings {
    /// `[slack] api_url`; `None` means Slack's own.
    pub api_url: Option<String>,
    /// The bot token, if its variable is set.
    pub bot_token: Option<Secret>,
    /// The variable the bot token comes from (default `SLACK_BOT_TOKEN`).
    pub bot_token_env: String,
    /// The app-level token, if its variable is set.
    pub app_token: Option<Secret>,
    /// The variable the app-level token comes from (default `SLACK_APP_TOKEN`).
    pub app_token_env: String,
    /// `[slack] channel`.
    pub channel: Option<String>,
}

/// Why the Slack settings are unusable. Not retried: a human must fix the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Some values are missing or empty; all of them are listed.
    #[error("Slack is not configured: missing {}", MissingValue::list(.missing))]
    Missing {
        /// Every missing value, in a fixed order.
        missing: Vec<MissingValue>,
    },
    /// A token does not have the prefix of its kind (the two are easily swapped).
    #[error(
        "the value of {env} is not a Slack {what}: it should start with `{prefix}` (the token itself is not shown)"
    )]
    WrongToken {
        /// `bot token` or `app-level token`.
        what: &'static str,
        /// The variable it came from.
        env: String,
        /// The prefix it should have.
        prefix: &'static str,
    },
    /// The channel is a name, not an ID.
    #[error(
        "invalid Slack channel {channel:?}: give the channel's ID, like C0123456789 (in Slack: the channel's details, About, Channel ID), in `slack.channel`"
    )]
    InvalidChannel {
        /// The channel as given.
        channel: String,
    },
    /// The API URL is not `http(s)://` with a host.
    #[error("invalid Slack API URL {url:?}: {reason} (set `slack.api_url`)")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl RawSlackSettings {
    /// Empty values with the default variable names.
    pub fn with_default_envs() -> Self {
        RawSlackSettings {
            bot_token_env: DEFAULT_BOT_TOKEN_ENV.to_owned(),
            app_token_env: DEFAULT_APP_TOKEN_ENV.to_owned(),
            ..RawSlackSettings::default()
        }
    }
}

impl SlackSettings {
    /// Validates the `[slack]` table (with the environment's values already read into it).
    pub fn from_config(config: &SlackConfig) -> Result<Self, ConfigError> {
        Self::new(&RawSlackSettings {
            api_url: Some(config.api_url.clone()),
            bot_token: config.bot_token.clone(),
            bot_token_env: config.bot_token_env.clone(),
            app_token: config.app_token.clone(),
            app_token_env: config.app_token_env.clone(),
            channel: config.channel.clone(),
        })
    }

    /// Validates `raw` (each value trimmed; empty counts as missing).
    pub fn new(raw: &RawSlackSettings) -> Result<Self, ConfigError> {
        let bot_token = given_secret(raw.bot_token.as_ref());
        let app_token = given_secret(raw.app_token.as_ref());
        let channel = given(raw.channel.as_deref());
        let (Some(bot_token), Some(app_token), Some(channel)) = (&bot_token, &app_token, &channel)
        else {
            let missing = [
                bot_token
                    .is_none()
                    .then(|| MissingValue::env("the bot token", &raw.bot_token_env)),
                app_token
                    .is_none()
                    .then(|| MissingValue::env("the app-level token", &raw.app_token_env)),
                channel.is_none().then(|| MissingValue {
                    what: "the channel",
                    set_by: "`slack.channel` or SLACK_CHANNEL".to_owned(),
                }),
            ];
            let missing = missing.into_iter().flatten().collect();
            return Err(ConfigError::Missing { missing });
        };
        let (bot_token, app_token, channel) =
            (bot_token.clone(), app_token.clone(), channel.clone());
        check_prefix(&bot_token, "bot token", &raw.bot_token_env, "xoxb-")?;
        check_prefix(&app_token, "app-level token", &raw.app_token_env, "xapp-")?;
        if !is_channel_id(&channel) {
            return Err(ConfigError::InvalidChannel { channel });
        }
        let api_url = validate_url(raw.api_url.as_deref().unwrap_or(DEFAULT_API_URL))?;
        Ok(SlackSettings {
            api_url,
            bot_token,
            app_token,
            channel,
        })
    }
}

fn check_prefix(
    token: &Secret,
    what: &'static str,
    env: &str,
    prefix: &'static str,
) -> Result<(), ConfigError> {
    if token.expose().starts_with(prefix) {
        Ok(())
    } else {
        Err(ConfigError::WrongToken {
            what,
            env: env.to_owned(),
            prefix,
        })
    }
}

/// A public (`C…`) or private (`G…`) channel's ID: an upper-case letter and digit string.
fn is_channel_id(channel: &str) -> bool {
    channel.len() >= 9
        && (channel.starts_with('C') || channel.starts_with('G'))
        && channel
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Checks `http(s)://host[...]` and drops trailing slashes.
fn validate_url(url: &str) -> Result<String, ConfigError> {
    tether_http::base_url(url).map_err(|reason| ConfigError::InvalidUrl {
        url: url.to_owned(),
        reason,
    })
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
