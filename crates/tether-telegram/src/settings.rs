//! Validated Telegram settings, built from `[telegram]` plus the environment.
//!
//! Misconfiguration never crashes anything: every problem becomes a [`ConfigError`] naming each
//! missing value and the variable (or `tether.toml` key) that sets it, so `ask_human` can hand
//! the agent and the human a clear fix.

use std::fmt;

use tether_config::{Secret, TelegramConfig};

/// Everything the client needs. `Debug` never shows the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramSettings {
    /// The Bot API's base URL without a trailing slash (`https://api.telegram.org`).
    pub api_url: String,
    /// The bot token from BotFather (`123456:ABC…`).
    pub token: Secret,
    /// The chat questions go to: a numeric id or `@channelname`.
    pub chat_id: String,
}

/// A value the Telegram channel needs but was not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingValue {
    /// What is missing, e.g. `the bot token`.
    pub what: &'static str,
    /// The environment variable that sets it.
    pub env: String,
    /// The `tether.toml` key that sets it, when there is one.
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

/// Why the Telegram settings are unusable. A human must fix the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Some values are missing or empty; all of them are listed.
    #[error("Telegram is not configured: missing {}", list(.missing))]
    Missing {
        /// Every missing value, in a fixed order.
        missing: Vec<MissingValue>,
    },
    /// The token is not `<digits>:<secret>` (the value itself is never shown).
    #[error("the Telegram bot token in {env} is not of the form <bot id>:<secret> from BotFather")]
    InvalidToken {
        /// The variable it came from.
        env: String,
    },
    /// The API URL is not `http(s)://` with a host.
    #[error("invalid Telegram API URL {url:?} (set `telegram.api_url`)")]
    InvalidUrl {
        /// The URL as given.
        url: String,
    },
}

fn list(missing: &[MissingValue]) -> String {
    missing
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl TelegramSettings {
    /// Validates explicit values (tests, benches).
    pub fn new(api_url: &str, token: Secret, chat_id: &str) -> Result<Self, ConfigError> {
        Self::from_config(&TelegramConfig {
            chat_id: Some(chat_id.to_owned()),
            bot_token: Some(token),
            api_url: api_url.to_owned(),
            ..TelegramConfig::default()
        })
    }

    /// Validates the `[telegram]` table (the environment already applied).
    pub fn from_config(config: &TelegramConfig) -> Result<Self, ConfigError> {
        let chat_id = config
            .chat_id
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty());
        let token = config
            .bot_token
            .as_ref()
            .map(|t| t.expose().trim())
            .filter(|t| !t.is_empty());
        let mut missing = Vec::new();
        if token.is_none() {
            missing.push(MissingValue {
                what: "the bot token",
                env: config.bot_token_env.clone(),
                toml_key: None,
            });
        }
        if chat_id.is_none() {
            missing.push(MissingValue {
                what: "the chat id",
                env: TelegramConfig::CHAT_ID_ENV.to_owned(),
                toml_key: Some("telegram.chat_id"),
            });
        }
        let (Some(token), Some(chat_id)) = (token, chat_id) else {
            return Err(ConfigError::Missing { missing });
        };
        if bot_id_of(token).is_none() {
            return Err(ConfigError::InvalidToken {
                env: config.bot_token_env.clone(),
            });
        }
        let api_url = config.api_url.trim().trim_end_matches('/').to_owned();
        let valid_url = reqwest::Url::parse(&api_url).is_ok_and(|u| {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
        });
        if !valid_url {
            return Err(ConfigError::InvalidUrl { url: api_url });
        }
        Ok(Self {
            api_url,
            token: Secret::new(token),
            chat_id: chat_id.to_owned(),
        })
    }

    /// The bot's id: the digits before `:` in the token (public: it is the bot's user id).
    pub fn bot_id(&self) -> u64 {
        bot_id_of(self.token.expose()).unwrap_or(0)
    }
}

/// The bot id of a well-formed token `<digits>:<secret>`.
fn bot_id_of(token: &str) -> Option<u64> {
    let (id, secret) = token.split_once(':')?;
    if secret.is_empty() || secret.contains(char::is_whitespace) {
        return None;
    }
    id.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_values_are_named_with_their_variables() {
        let err = TelegramSettings::from_config(&TelegramConfig::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Telegram is not configured: missing the bot token (set TELEGRAM_BOT_TOKEN), \
             the chat id (set TELEGRAM_CHAT_ID or `telegram.chat_id`)"
        );
    }

    #[test]
    fn a_malformed_token_is_refused_without_showing_it() {
        let err = TelegramSettings::new("http://x", Secret::new("not-a-token"), "5").unwrap_err();
        assert!(!err.to_string().contains("not-a-token"), "{err}");
        let ok = TelegramSettings::new("http://x/", Secret::new("42:abc"), "5").unwrap();
        assert_eq!((ok.bot_id(), ok.api_url.as_str()), (42, "http://x"));
    }
}
