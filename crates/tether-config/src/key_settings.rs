//! tether's own keys: every setting that names the environment variable holding one of
//! tether's secrets (a model's key, a bot's token, a webhook's URL, a mail password), listed
//! once. [`Config::key_vars`] is read off this list, so the variables it names are taken out of
//! tether's environment at start and kept from every child; the setting that names a variable
//! is said back from it. A setting missing here would reach the agent: the tests check that
//! every `…_env` key of the schema is here, and that each entry reads its own setting.

use crate::Config;

/// Who reads the key a setting names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A model endpoint (`[model]`, `[judge]`, `[loop_judge]`, `[planning]`): the key goes to
    /// the model's server.
    Model,
    /// A channel or a notice sink: the key goes where its notices and questions go (and an
    /// ntfy reply token inside every question).
    Channel,
}

/// A setting naming the variable of one of tether's keys.
pub(crate) struct KeySetting {
    /// Its table (`model`).
    pub table: &'static str,
    /// Its key in that table (`api_key_env`).
    pub key: &'static str,
    /// The variable it names in `config`, if any.
    pub var: fn(&Config) -> Option<&str>,
    /// Who reads the key.
    pub reader: Reader,
}

/// Every setting naming one of tether's keys.
pub(crate) const KEY_SETTINGS: &[KeySetting] = &[
    KeySetting {
        table: "model",
        key: "api_key_env",
        var: |c| c.model.as_ref()?.api_key_env.as_deref(),
        reader: Reader::Model,
    },
    KeySetting {
        table: "judge",
        key: "api_key_env",
        var: |c| c.judge.as_ref()?.endpoint.api_key_env.as_deref(),
        reader: Reader::Model,
    },
    KeySetting {
        table: "loop_judge",
        key: "api_key_env",
        var: |c| c.loop_judge.as_ref()?.endpoint.api_key_env.as_deref(),
        reader: Reader::Model,
    },
    KeySetting {
        table: "planning",
        key: "api_key_env",
        var: |c| c.planning.as_ref()?.api_key_env.as_deref(),
        reader: Reader::Model,
    },
    KeySetting {
        table: "zulip",
        key: "api_key_env",
        var: |c| Some(&c.zulip.api_key_env),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "slack",
        key: "bot_token_env",
        var: |c| Some(&c.slack.bot_token_env),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "slack",
        key: "app_token_env",
        var: |c| Some(&c.slack.app_token_env),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "telegram",
        key: "bot_token_env",
        var: |c| Some(&c.telegram.bot_token_env),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "ntfy",
        key: "topic_env",
        var: |c| c.ntfy.topic_env.as_deref(),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "ntfy",
        key: "token_env",
        var: |c| c.ntfy.token_env.as_deref(),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "ntfy",
        key: "reply_token_env",
        var: |c| c.ntfy.reply_token_env.as_deref(),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "webhook",
        key: "url_env",
        var: |c| c.webhook.url_env.as_deref(),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "email",
        key: "username_env",
        var: |c| c.email.username_env.as_deref(),
        reader: Reader::Channel,
    },
    KeySetting {
        table: "email",
        key: "password_env",
        var: |c| c.email.password_env.as_deref(),
        reader: Reader::Channel,
    },
];

#[cfg(test)]
#[path = "key_settings_tests.rs"]
mod tests;
