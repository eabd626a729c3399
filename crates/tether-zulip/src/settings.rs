//! Validated Zulip settings, built from `[zulip]` plus the environment.
//!
//! Misconfiguration must never crash anything: every problem becomes a
//! [`ConfigError`] that names each missing value and the variable that would set it, so the
//! `ask_human` tool can hand the agent (and the human reading the log) a clear fix.

pub use tether_config::MissingSetting as MissingValue;
use tether_config::{Secret, given, given_secret};

use crate::ZulipConfig;

/// Everything the client needs to talk to Zulip. `Debug` never shows the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZulipSettings {
    /// The server's base URL, `http(s)://host[/prefix]`, without a trailing slash.
    pub server_url: String,
    /// The bot's email address (the Basic auth user name).
    pub bot_email: String,
    /// The bot's API key (the Basic auth password).
    pub api_key: Secret,
    /// The stream (channel) questions are posted to.
    pub stream: String,
}

/// Why the Zulip settings are unusable. Not retried: a human must fix the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Some values are missing or empty; all of them are listed.
    #[error("Zulip is not configured: missing {}", MissingValue::list(.missing))]
    Missing {
        /// Every missing value, in a fixed order.
        missing: Vec<MissingValue>,
    },
    /// The server URL is not `http(s)://` with a host.
    #[error(
        "invalid Zulip server URL {url:?}: {reason} (set ZULIP_SERVER_URL or `zulip.server_url`)"
    )]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The bot email has no `@`.
    #[error(
        "invalid Zulip bot email {email:?}: expected an address like bot@example.com (set ZULIP_BOT_EMAIL or `zulip.bot_email`)"
    )]
    InvalidEmail {
        /// The email as given.
        email: String,
    },
}

impl ZulipSettings {
    /// Validates explicit values (each trimmed; empty counts as missing).
    pub fn new(
        server_url: &str,
        bot_email: &str,
        api_key: Secret,
        stream: &str,
    ) -> Result<Self, ConfigError> {
        let config = ZulipConfig {
            server_url: Some(server_url.to_owned()),
            bot_email: Some(bot_email.to_owned()),
            stream: Some(stream.to_owned()),
            api_key: Some(api_key),
            ..ZulipConfig::default()
        };
        Self::from_config(&config)
    }

    /// Validates the `[zulip]` table (with the environment's overrides already applied).
    pub fn from_config(config: &ZulipConfig) -> Result<Self, ConfigError> {
        let server_url = given(config.server_url.as_deref());
        let bot_email = given(config.bot_email.as_deref());
        let stream = given(config.stream.as_deref());
        let api_key = given_secret(config.api_key.as_ref());
        let missing = [
            server_url.is_none().then(|| {
                MissingValue::env_or_key(
                    "the server URL",
                    ZulipConfig::SERVER_URL_ENV,
                    "zulip.server_url",
                )
            }),
            bot_email.is_none().then(|| {
                MissingValue::env_or_key(
                    "the bot email",
                    ZulipConfig::BOT_EMAIL_ENV,
                    "zulip.bot_email",
                )
            }),
            api_key
                .is_none()
                .then(|| MissingValue::env("the bot API key", &config.api_key_env)),
            stream.is_none().then(|| {
                MissingValue::env_or_key("the stream", ZulipConfig::STREAM_ENV, "zulip.stream")
            }),
        ]
        .into_iter()
        .flatten()
        .collect();
        match (server_url, bot_email, api_key, stream) {
            (Some(server_url), Some(bot_email), Some(api_key), Some(stream)) => {
                let server_url = validate_url(&server_url)?;
                if !bot_email.contains('@') {
                    return Err(ConfigError::InvalidEmail { email: bot_email });
                }
                Ok(Self {
                    server_url,
                    bot_email,
                    api_key,
                    stream,
                })
            }
            _ => Err(ConfigError::Missing { missing }),
        }
    }
}

/// Checks `http(s)://host[...]` and drops trailing slashes (and a pasted `/api/v1`).
fn validate_url(url: &str) -> Result<String, ConfigError> {
    let mut base = tether_http::base_url(url).map_err(|reason| ConfigError::InvalidUrl {
        url: url.to_owned(),
        reason,
    })?;
    if let Some(stripped) = base.strip_suffix("/api/v1") {
        base = stripped.trim_end_matches('/').to_owned();
    }
    Ok(base)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
