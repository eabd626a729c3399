//! tether's own keys: every setting that names the environment variable holding one of
//! tether's secrets (a model's key, a bot's token, a webhook's URL, a mail password). The core
//! tables' are listed here, each reading its own setting; an integration's are the keys its
//! table declares as a secret's variable ([`crate::KeyKind::SecretVar`]), whose variables
//! tether-config resolves itself while reading the table. [`Config::key_vars`] is read off
//! [`named`], so the variables are taken out of tether's environment at start and kept from
//! every child; the setting that names a variable is said back from it. A setting missing here
//! would reach the agent: the tests check that every `…_env` key of the schema names a key, and
//! that each entry reads its own setting.

use crate::Config;

/// Who reads the key a setting names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A model endpoint (`[model]`, `[judge]`, `[loop_judge]`, `[side]`, `[planning]`): the
    /// key goes to the model's server.
    Model,
    /// A declared table's (a channel's, a notice sink's): the key goes where its notices and
    /// questions go (and an ntfy reply token inside every question).
    Channel,
}

/// A setting naming the variable of one of tether's keys, in a configuration.
pub(crate) struct Named<'c> {
    /// Its table (`model`).
    pub table: &'static str,
    /// Its key in that table (`api_key_env`).
    pub key: &'static str,
    /// The variable it names, if any.
    pub var: Option<&'c str>,
    /// Who reads the key.
    pub reader: Reader,
}

/// Every setting of `config` naming one of tether's keys: the core tables', each panel
/// judge's, then the declared tables' in the schema's order.
pub(crate) fn named(config: &Config) -> Vec<Named<'_>> {
    let core = KEY_SETTINGS.iter().map(|setting| Named {
        table: setting.table,
        key: setting.key,
        var: (setting.var)(config),
        reader: setting.reader,
    });
    let declared = config.integrations.secret_vars().map(|secret| Named {
        table: secret.table,
        key: secret.key,
        var: secret.var,
        reader: Reader::Channel,
    });
    // A judge panel's keys, one setting per judge beside `[judge]`.
    let panel = config
        .judge
        .iter()
        .flat_map(|judge| &judge.panel)
        .map(|judge| Named {
            table: "judge.panel",
            key: "api_key_env",
            var: judge.endpoint.api_key_env.as_deref(),
            reader: Reader::Model,
        });
    core.chain(panel).chain(declared).collect()
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

/// Every setting of the core tables naming one of tether's keys.
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
        table: "side",
        key: "api_key_env",
        var: |c| c.side.as_ref()?.api_key_env.as_deref(),
        reader: Reader::Model,
    },
    KeySetting {
        table: "planning",
        key: "api_key_env",
        var: |c| c.planning.as_ref()?.api_key_env.as_deref(),
        reader: Reader::Model,
    },
];

#[cfg(test)]
#[path = "key_settings_tests.rs"]
mod tests;
