//! Every setting that names one of tether's keys is in [`KEY_SETTINGS`] (a core table's) or
//! declared as a secret's variable (a declared table's), and each reads its own setting: a key
//! forgotten there would reach the agent.

use std::collections::BTreeSet;
use std::path::Path;

use super::{KEY_SETTINGS, named};
use crate::test_table::schema;
use crate::{MapEnv, Schema};

/// The schema's keys naming an environment variable (`…_env`), as `table.key`.
fn env_keys_of_the_schema(schema: &Schema) -> BTreeSet<String> {
    schema
        .tables()
        .flat_map(|(table, keys)| {
            keys.into_iter()
                .filter(|key| key.ends_with("_env"))
                .map(move |key| format!("{table}.{key}"))
        })
        .collect()
}

#[test]
fn every_env_key_of_the_schema_names_one_of_tethers_keys() {
    for schema in [Schema::core(), schema()] {
        let listed: BTreeSet<String> = schema
            .key_settings()
            .into_iter()
            .map(|(table, key)| format!("{table}.{key}"))
            .collect();
        assert_eq!(
            env_keys_of_the_schema(&schema),
            listed,
            "a setting naming a variable is a key of tether's: list it in KEY_SETTINGS, or \
             declare it with `KeyDecl::secret_var`"
        );
    }
}

/// A tether.toml setting every `…_env` key of the schema to a variable named after it.
const EVERY_KEY: &str = r#"
[model]
api = "openai-chat"
base_url = "http://127.0.0.1:9"
model = "m"
api_key_env = "V_MODEL_API_KEY_ENV"

[planning]
api_key_env = "V_PLANNING_API_KEY_ENV"

[judge]
api = "openai-chat"
base_url = "http://127.0.0.1:9"
model = "j"
api_key_env = "V_JUDGE_API_KEY_ENV"

[loop_judge]
api = "openai-chat"
base_url = "http://127.0.0.1:9"
model = "l"
api_key_env = "V_LOOP_JUDGE_API_KEY_ENV"

[side]
api = "openai-chat"
base_url = "http://127.0.0.1:9"
model = "s"
api_key_env = "V_SIDE_API_KEY_ENV"

[pager]
token_env = "V_PAGER_TOKEN_ENV"
"#;

/// The variable [`EVERY_KEY`] names for `table.key`.
fn var_of(table: &str, key: &str) -> String {
    format!("V_{table}_{key}").to_ascii_uppercase()
}

#[test]
fn each_listed_setting_reads_its_own_key_and_key_vars_has_them_all() {
    let schema = schema();
    let env = env_keys_of_the_schema(&schema)
        .iter()
        .filter_map(|k| k.split_once('.'))
        .fold(MapEnv::new(), |env, (table, key)| {
            env.with(var_of(table, key), "secret")
        });
    let config = crate::parse(&schema, EVERY_KEY, Path::new("tether.toml"), &env).unwrap();
    for setting in KEY_SETTINGS {
        assert_eq!(
            (setting.var)(&config),
            Some(var_of(setting.table, setting.key).as_str()),
            "{}.{}",
            setting.table,
            setting.key
        );
    }
    for setting in named(&config) {
        assert_eq!(
            setting.var,
            Some(var_of(setting.table, setting.key).as_str()),
            "{}.{}",
            setting.table,
            setting.key
        );
    }
    let vars = config.key_vars();
    for key in env_keys_of_the_schema(&schema) {
        let (table, key) = key.split_once('.').unwrap();
        assert!(vars.contains(&var_of(table, key)), "{table}.{key}");
        assert_eq!(
            config.key_setting(&var_of(table, key)).as_deref(),
            Some(format!("[{table}] {key}").as_str())
        );
    }
}

#[test]
fn a_declared_secrets_default_variable_is_kept_without_the_table_and_with_the_defaults() {
    let schema = schema();
    let absent = crate::parse(&schema, "", Path::new("tether.toml"), &MapEnv::new()).unwrap();
    assert_eq!(absent.key_vars(), ["PAGER_TOKEN"]);
    assert_eq!(
        absent.key_setting("PAGER_TOKEN").as_deref(),
        Some("[pager] token_env")
    );
    assert_eq!(crate::Config::defaults(&schema), absent);
    assert_eq!(crate::Config::defaults(&schema).key_vars(), ["PAGER_TOKEN"]);
    // Read without the table (a schema without it), the variable is not the configuration's.
    assert!(crate::Config::default().key_vars().is_empty());
}
