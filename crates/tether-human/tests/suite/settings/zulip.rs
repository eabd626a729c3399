//! `[zulip]`: values from the file, the environment's overrides, the key from its variable, the
//! settings a listed channel lacks, and the errors naming each setting.

use std::fs;

use tether_config::{MapEnv, load};
use tether_human::registry::schema;
use tether_zulip::ZulipConfig;

use super::{config, config_with, problem, problems, problems_with, warnings_with};

/// The `[zulip]` table `text` gives under `env`.
fn zulip_of(text: &str, env: &MapEnv) -> ZulipConfig {
    ZulipConfig::of(&config_with(text, env)).into_owned()
}

const ZULIP: &str = "[zulip]\nserver_url = \"https://file.example.com\"\n\
                     bot_email = \"file@example.com\"\nstream = \"file-stream\"\n";

#[test]
fn zulip_values_come_from_the_file_without_overrides() {
    let zulip = zulip_of(ZULIP, &MapEnv::new());
    assert_eq!(
        zulip.server_url.as_deref(),
        Some("https://file.example.com")
    );
    assert_eq!(zulip.bot_email.as_deref(), Some("file@example.com"));
    assert_eq!(zulip.stream.as_deref(), Some("file-stream"));
}

#[test]
fn zulip_environment_variables_override_the_file() {
    let env = MapEnv::new()
        .with("ZULIP_SERVER_URL", "https://env.example.com")
        .with("ZULIP_BOT_EMAIL", "env@example.com")
        .with("ZULIP_STREAM", "env-stream");
    let zulip = zulip_of(ZULIP, &env);
    assert_eq!(zulip.server_url.as_deref(), Some("https://env.example.com"));
    assert_eq!(zulip.bot_email.as_deref(), Some("env@example.com"));
    assert_eq!(zulip.stream.as_deref(), Some("env-stream"));
}

#[test]
fn zulip_environment_applies_without_a_zulip_table() {
    let env = MapEnv::new().with("ZULIP_STREAM", "only-env");
    let zulip = zulip_of("", &env);
    assert_eq!(zulip.stream.as_deref(), Some("only-env"));
    assert_eq!(zulip.server_url, None);
}

#[test]
fn blank_variables_count_as_unset() {
    let env = MapEnv::new()
        .with("ZULIP_STREAM", "  ")
        .with("ZULIP_BOT_API_KEY", "");
    let zulip = zulip_of(ZULIP, &env);
    assert_eq!(zulip.stream.as_deref(), Some("file-stream"));
    assert_eq!(zulip.api_key, None);
}

#[test]
fn invalid_environment_values_are_problems_naming_the_variable() {
    let env = MapEnv::new()
        .with("ZULIP_SERVER_URL", "chat.example.com")
        .with("ZULIP_BOT_EMAIL", "not-an-email");
    assert_eq!(
        problems_with("", &env),
        [
            "tether.toml: zulip.server_url: from ZULIP_SERVER_URL: must be an http:// or \
             https:// URL such as https://chat.example.com, got \"chat.example.com\"",
            "tether.toml: zulip.bot_email: from ZULIP_BOT_EMAIL: must be an email address \
             such as tether-bot@chat.example.com, got \"not-an-email\"",
        ]
    );
}

#[test]
fn the_zulip_key_comes_from_the_default_variable() {
    let env = MapEnv::new().with("ZULIP_BOT_API_KEY", "zulip-key-1");
    let zulip = zulip_of("", &env);
    assert_eq!(zulip.api_key.unwrap().expose(), "zulip-key-1");
}

#[test]
fn the_zulip_key_comes_from_the_named_variable_only() {
    let env = MapEnv::new()
        .with("ZULIP_BOT_API_KEY", "default-var")
        .with("TEAM_ZULIP_KEY", "named-var");
    let zulip = zulip_of("[zulip]\napi_key_env = \"TEAM_ZULIP_KEY\"\n", &env);
    assert_eq!(zulip.api_key_env, "TEAM_ZULIP_KEY");
    assert_eq!(zulip.api_key.unwrap().expose(), "named-var");

    let env = MapEnv::new().with("ZULIP_BOT_API_KEY", "default-var");
    let zulip = zulip_of("[zulip]\napi_key_env = \"TEAM_ZULIP_KEY\"\n", &env);
    assert_eq!(zulip.api_key, None);
}

const ZULIP_CHANNEL: &str = "[human]\nchannels = [\"cli\", \"zulip\"]\n";

/// A warning, not an error: the run goes on without Zulip and `ask_human` names what is missing.
#[test]
fn a_zulip_channel_without_settings_names_each_missing_value_and_variable() {
    assert_eq!(
        warnings_with(ZULIP_CHANNEL, &MapEnv::new()),
        [
            "tether.toml:2: human.channels: \"zulip\" is a channel but its settings are missing: \
          `zulip.server_url` (or ZULIP_SERVER_URL), `zulip.bot_email` (or ZULIP_BOT_EMAIL), \
          `zulip.stream` (or ZULIP_STREAM), the bot's API key (set ZULIP_BOT_API_KEY)"
        ]
    );
}

#[test]
fn a_zulip_channel_names_only_what_is_missing() {
    let text = format!("{ZULIP_CHANNEL}[zulip]\nstream = \"s\"\napi_key_env = \"ZK\"\n");
    let env = MapEnv::new().with("ZULIP_BOT_EMAIL", "bot@z.example.com");
    assert_eq!(
        warnings_with(&text, &env),
        [
            "tether.toml:2: human.channels: \"zulip\" is a channel but its settings are missing: \
          `zulip.server_url` (or ZULIP_SERVER_URL), the bot's API key (set ZK)"
        ]
    );
}

#[test]
fn a_zulip_channel_configured_by_the_environment_is_complete() {
    let env = MapEnv::new()
        .with("ZULIP_SERVER_URL", "https://z.example.com")
        .with("ZULIP_BOT_EMAIL", "bot@z.example.com")
        .with("ZULIP_STREAM", "repo")
        .with("ZULIP_BOT_API_KEY", "k");
    let config = config_with(ZULIP_CHANNEL, &env);
    assert_eq!(
        ZulipConfig::of(&config).server_url.as_deref(),
        Some("https://z.example.com")
    );
    assert!(warnings_with(ZULIP_CHANNEL, &env).is_empty());
}

#[test]
fn an_invalid_zulip_value_is_not_also_reported_missing() {
    let text = format!(
        "{ZULIP_CHANNEL}[zulip]\nserver_url = \"nope\"\nbot_email = \"b@z.example.com\"\n\
         stream = \"s\"\n"
    );
    let env = MapEnv::new().with("ZULIP_BOT_API_KEY", "k");
    let all = problems_with(&text, &env);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].starts_with("tether.toml:4: zulip.server_url: must be an http://"));
}

#[test]
fn zulip_settings_are_not_required_without_the_channel() {
    config("[zulip]\nstream = \"s\"\n");
}

#[test]
fn a_loaded_configs_debug_never_shows_a_key() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\nmodel = \"m\"\n\
         api_key_env = \"OPENAI_API_KEY\"\n[human]\nchannels = [\"zulip\"]\n\
         [zulip]\nserver_url = \"https://z.example.com\"\nbot_email = \"b@z.example.com\"\n\
         stream = \"s\"\n",
    )
    .unwrap();
    let env = MapEnv::new()
        .with("ZULIP_BOT_API_KEY", "zulip-secret-4711")
        .with("OPENAI_API_KEY", "openai-secret-0815");
    let loaded = load(&schema(), dir.path(), &env).unwrap();
    assert!(
        ZulipConfig::of(&loaded.config).api_key.is_some(),
        "the key was not loaded"
    );
    for shown in [
        format!("{loaded:?}"),
        format!("{loaded:#?}"),
        format!("{env:?}"),
    ] {
        assert!(!shown.contains("zulip-secret-4711"), "{shown}");
        assert!(!shown.contains("openai-secret-0815"), "{shown}");
    }
    let key = loaded.config.model.unwrap().api_key(&env).unwrap().unwrap();
    assert!(!format!("{key:?}").contains("openai-secret-0815"));
}

#[test]
fn a_literal_api_key_in_judge_and_zulip_is_an_error_too() {
    let judge = "[judge]\napi = \"openai-chat\"\nbase_url = \"https://h\"\nmodel = \"m\"\n";
    assert_eq!(
        problem(&format!("{judge}api_key = \"sk-1\"\n")),
        "tether.toml:5: judge.api_key: API keys never live in files; remove `api_key`, then put \
         the key in the environment variable OPENAI_API_KEY and set \
         `judge.api_key_env = \"OPENAI_API_KEY\"`"
    );
    assert_eq!(
        problem("[zulip]\napi_key = \"zk-1\"\n"),
        "tether.toml:2: zulip.api_key: API keys never live in files; remove `api_key`, then set \
         the environment variable ZULIP_BOT_API_KEY instead (named by `zulip.api_key_env`)"
    );
    assert_eq!(
        problem("[zulip]\napi_key_env = \"ZK\"\ntoken = \"zk-1\"\n"),
        "tether.toml:3: zulip.token: API keys never live in files; remove `token`, then set \
         the environment variable ZK instead (named by `zulip.api_key_env`)"
    );
}

#[test]
fn no_problem_ever_echoes_a_key_value() {
    let text = "api_key = \"sk-top-1\"\n[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\n\
                model = \"m\"\napi_key = \"sk-model-2\"\napiKey = \"sk-model-3\"\n\
                [zulip]\napi-key = \"sk-zulip-4\"\napi_key_env = \"sk-zulip-5\"\n";
    let all = problems(text);
    assert_eq!(all.len(), 5, "{all:#?}");
    for shown in &all {
        assert!(!shown.contains("sk-"), "{shown}");
        assert!(shown.contains("never"), "{shown}");
    }
}

#[test]
fn zulip_values_are_checked_at_their_lines() {
    for (text, expected) in [
        (
            "[zulip]\nbot_email = \"bot\"\n",
            "tether.toml:2: zulip.bot_email: must be an email address such as tether-bot@chat.example.com, got \"bot\"",
        ),
        (
            "[zulip]\nstream = \"\"\n",
            "tether.toml:2: zulip.stream: must not be empty",
        ),
        (
            "[zulip]\nserver_url = \"chat.example.com\"\n",
            "tether.toml:2: zulip.server_url: must be an http:// or https:// URL such as https://chat.example.com, got \"chat.example.com\"",
        ),
        (
            "[zulip]\nstram = \"x\"\n",
            "tether.toml:2: zulip.stram: unknown key; did you mean `stream`?",
        ),
    ] {
        assert_eq!(problem(text), expected, "{text}");
    }
    let key = problem("[zulip]\napi_key_env = \"1KEY\"\n");
    assert!(
        key.starts_with("tether.toml:2: zulip.api_key_env: must be the NAME"),
        "{key}"
    );
}

#[test]
fn no_problem_echoes_a_key_written_in_the_zulip_table() {
    let all = problems("[zulip]\napi-key = \"sk-zulip-4\"\napi_key_env = \"sk-zulip-5\"\n");
    assert_eq!(all.len(), 2, "{all:#?}");
    for shown in &all {
        assert!(!shown.contains("sk-"), "{shown}");
        assert!(shown.contains("never"), "{shown}");
    }
}
