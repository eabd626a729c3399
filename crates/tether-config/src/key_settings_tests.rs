//! Every setting that names one of tether's keys is in [`KEY_SETTINGS`], and each entry reads
//! its own setting: a key forgotten there would reach the agent.

use std::collections::BTreeSet;
use std::path::Path;

use super::KEY_SETTINGS;
use crate::MapEnv;
use crate::keys::TABLES;

/// The schema's keys naming an environment variable (`…_env`), as `table.key`.
fn env_keys_of_the_schema() -> BTreeSet<String> {
    TABLES
        .iter()
        .flat_map(|(table, keys)| {
            keys.iter()
                .filter(|key| key.ends_with("_env"))
                .map(move |key| format!("{table}.{key}"))
        })
        .collect()
}

#[test]
fn every_env_key_of_the_schema_names_one_of_tethers_keys() {
    let listed: BTreeSet<String> = KEY_SETTINGS
        .iter()
        .map(|s| format!("{}.{}", s.table, s.key))
        .collect();
    assert_eq!(
        env_keys_of_the_schema(),
        listed,
        "a setting naming a variable is a key of tether's: list it in KEY_SETTINGS"
    );
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

[zulip]
api_key_env = "V_ZULIP_API_KEY_ENV"

[slack]
bot_token_env = "V_SLACK_BOT_TOKEN_ENV"
app_token_env = "V_SLACK_APP_TOKEN_ENV"

[telegram]
bot_token_env = "V_TELEGRAM_BOT_TOKEN_ENV"

[ntfy]
topic = "t"
topic_env = "V_NTFY_TOPIC_ENV"
token_env = "V_NTFY_TOKEN_ENV"
reply_token_env = "V_NTFY_REPLY_TOKEN_ENV"

[webhook]
url_env = "V_WEBHOOK_URL_ENV"

[email]
smtp_host = "127.0.0.1"
from = "a@example.com"
to = ["b@example.com"]
username_env = "V_EMAIL_USERNAME_ENV"
password_env = "V_EMAIL_PASSWORD_ENV"
"#;

/// The variable [`EVERY_KEY`] names for `table.key`.
fn var_of(table: &str, key: &str) -> String {
    format!("V_{table}_{key}").to_ascii_uppercase()
}

#[test]
fn each_listed_setting_reads_its_own_key_and_key_vars_has_them_all() {
    let env = env_keys_of_the_schema()
        .iter()
        .filter_map(|k| k.split_once('.'))
        .fold(MapEnv::new(), |env, (table, key)| {
            env.with(var_of(table, key), "secret")
        });
    let config = crate::parse(EVERY_KEY, Path::new("tether.toml"), &env).unwrap();
    for setting in KEY_SETTINGS {
        assert_eq!(
            (setting.var)(&config),
            Some(var_of(setting.table, setting.key).as_str()),
            "{}.{}",
            setting.table,
            setting.key
        );
    }
    let vars = config.key_vars();
    for key in env_keys_of_the_schema() {
        let (table, key) = key.split_once('.').unwrap();
        assert!(vars.contains(&var_of(table, key)), "{table}.{key}");
        assert_eq!(
            config.key_setting(&var_of(table, key)).as_deref(),
            Some(format!("[{table}] {key}").as_str())
        );
    }
}
