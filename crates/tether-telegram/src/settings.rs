//! Validated Telegram settings, built from `[telegram]` plus the environment.
//!
//! Misconfiguration never crashes anything: every problem becomes a [`ConfigError`] naming each
//! missing value and the variable (or `tether.toml` key) that sets it, so `ask_human` can hand
//! the agent and the human a clear fix.

pub use tether_config::MissingSetting as MissingValue;
use tether_config::{Secret, given, given_secret};

use crate::TelegramConfig;

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

/// Why the Telegram settings are unusable. A human must fix the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Some values are missing or empty; all of them are listed.
    #[error("Telegram is not configured: missing {}", MissingValue::list(.missing))]
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
        let chat_id = given(config.chat_id.as_deref());
        let token = given_secret(config.bot_token.as_ref());
        let (Some(token), Some(chat_id)) = (&token, &chat_id) else {
            let missing = [
                token
                    .is_none()
                    .then(|| MissingValue::env("the bot token", &config.bot_token_env)),
                chat_id.is_none().then(|| {
                    MissingValue::env_or_key(
                        "the chat id",
                        TelegramConfig::CHAT_ID_ENV,
                        "telegram.chat_id",
                    )
                }),
            ];
            let missing = missing.into_iter().flatten().collect();
            return Err(ConfigError::Missing { missing });
        };
        if bot_id_of(token.expose()).is_none() {
            return Err(ConfigError::InvalidToken {
                env: config.bot_token_env.clone(),
            });
        }
        let api_url =
            tether_http::base_url(&config.api_url).map_err(|_| ConfigError::InvalidUrl {
                url: config.api_url.trim().to_owned(),
            })?;
        Ok(Self {
            api_url,
            token: token.clone(),
            chat_id: chat_id.clone(),
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
