//! Validated Zulip settings, built from `[zulip]` plus the environment.
//!
//! Misconfiguration must never crash anything: every problem becomes a
//! [`ConfigError`] that names each missing value and the variable that would set it, so the
//! `ask_human` tool can hand the agent (and the human reading the log) a clear fix.

use std::fmt;

use tether_config::{Secret, ZulipConfig};

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

/// A value the Zulip channel needs but was not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingValue {
    /// What is missing, e.g. `the server URL`.
    pub what: &'static str,
    /// The environment variable that sets it, e.g. `ZULIP_SERVER_URL`.
    pub env: String,
    /// The `tether.toml` key that sets it, when there is one (the key itself never is).
    pub toml_key: Option<&'static str>,
}

impl fmt::Display for MissingValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.toml_key {
            Some(key) => write!(f, "{} (set {} or `{key}`)", self.what, self.env),
            None => write!(f, "{} (set {})", self.what, self.env),
        }
    }
}

/// Why the Zulip settings are unusable. Not retried: a human must fix the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Some values are missing or empty; all of them are listed.
    #[error("Zulip is not configured: missing {}", list(.missing))]
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

fn list(missing: &[MissingValue]) -> String {
    missing
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
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
        let present = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let server_url = present(&config.server_url);
        let bot_email = present(&config.bot_email);
        let stream = present(&config.stream);
        let api_key = config
            .api_key
            .as_ref()
            .filter(|key| !key.expose().trim().is_empty())
            .map(|key| Secret::new(key.expose().trim()));
        let mut missing = Vec::new();
        let mut need = |absent: bool, what, env: &str, toml_key| {
            if absent {
                missing.push(MissingValue {
                    what,
                    env: env.to_owned(),
                    toml_key,
                });
            }
        };
        need(
            server_url.is_none(),
            "the server URL",
            ZulipConfig::SERVER_URL_ENV,
            Some("zulip.server_url"),
        );
        need(
            bot_email.is_none(),
            "the bot email",
            ZulipConfig::BOT_EMAIL_ENV,
            Some("zulip.bot_email"),
        );
        need(
            api_key.is_none(),
            "the bot API key",
            &config.api_key_env,
            None,
        );
        need(
            stream.is_none(),
            "the stream",
            ZulipConfig::STREAM_ENV,
            Some("zulip.stream"),
        );
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
    let invalid = |reason: &str| ConfigError::InvalidUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|err| invalid(&err.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("there is no host"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("a base URL has no query or fragment"));
    }
    let mut base = url.trim_end_matches('/').to_owned();
    if let Some(stripped) = base.strip_suffix("/api/v1") {
        base = stripped.trim_end_matches('/').to_owned();
    }
    Ok(base)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
