//! What a channel needs but was not given, named so a person can fix it: the chat clients'
//! settings errors list every missing value with the variable or key that sets it.

use std::fmt;

use crate::Secret;

/// A value a channel needs but was not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingSetting {
    /// What is missing, e.g. `the bot token`.
    pub what: &'static str,
    /// What sets it: a variable (`SLACK_BOT_TOKEN`), a `tether.toml` key, or either.
    pub set_by: String,
}

impl MissingSetting {
    /// `what`, set by the variable `env`.
    pub fn env(what: &'static str, env: &str) -> Self {
        MissingSetting {
            what,
            set_by: env.to_owned(),
        }
    }

    /// `what`, set by the variable `env` or the key `key`.
    pub fn env_or_key(what: &'static str, env: &str, key: &str) -> Self {
        MissingSetting {
            what,
            set_by: format!("{env} or `{key}`"),
        }
    }

    /// `missing` as one list: `the bot token (set X), the chat id (set Y or `k`)`.
    pub fn list(missing: &[MissingSetting]) -> String {
        missing
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for MissingSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (set {})", self.what, self.set_by)
    }
}

/// A value as given, trimmed; `None` when it is absent or blank.
pub fn given(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// A secret as given, trimmed; `None` when it is absent or blank.
pub fn given_secret(secret: Option<&Secret>) -> Option<Secret> {
    given(secret.map(Secret::expose)).map(Secret::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_values_read_as_one_list_naming_what_sets_each() {
        let missing = [
            MissingSetting::env("the bot token", "TELEGRAM_BOT_TOKEN"),
            MissingSetting::env_or_key("the chat id", "TELEGRAM_CHAT_ID", "telegram.chat_id"),
        ];
        assert_eq!(
            MissingSetting::list(&missing),
            "the bot token (set TELEGRAM_BOT_TOKEN), the chat id (set TELEGRAM_CHAT_ID or \
             `telegram.chat_id`)"
        );
    }

    #[test]
    fn blank_counts_as_not_given() {
        assert_eq!(given(Some("  x ")), Some("x".to_owned()));
        assert_eq!(given(Some(" \n")), None);
        assert_eq!(given(None), None);
        let key = Secret::new(" k3y ");
        assert_eq!(
            given_secret(Some(&key)).map(|s| s.expose().to_owned()),
            Some("k3y".into())
        );
        assert!(given_secret(Some(&Secret::new(""))).is_none());
    }
}
