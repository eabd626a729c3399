//! The environment overrides the file; keys come only from the environment.

use std::collections::HashMap;

use tether_config::{Api, ConfigError, Env, MapEnv, ModelConfig, ProcessEnv};

use super::{config, config_with, problems_with};

const ZULIP: &str = "[zulip]\nserver_url = \"https://file.example.com\"\n\
                     bot_email = \"file@example.com\"\nstream = \"file-stream\"\n";

#[test]
fn zulip_values_come_from_the_file_without_overrides() {
    let zulip = config(ZULIP).zulip;
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
    let zulip = config_with(ZULIP, &env).zulip;
    assert_eq!(zulip.server_url.as_deref(), Some("https://env.example.com"));
    assert_eq!(zulip.bot_email.as_deref(), Some("env@example.com"));
    assert_eq!(zulip.stream.as_deref(), Some("env-stream"));
}

#[test]
fn zulip_environment_applies_without_a_zulip_table() {
    let env = MapEnv::new().with("ZULIP_STREAM", "only-env");
    let zulip = config_with("", &env).zulip;
    assert_eq!(zulip.stream.as_deref(), Some("only-env"));
    assert_eq!(zulip.server_url, None);
}

#[test]
fn blank_variables_count_as_unset() {
    let env = MapEnv::new()
        .with("ZULIP_STREAM", "  ")
        .with("ZULIP_BOT_API_KEY", "");
    let zulip = config_with(ZULIP, &env).zulip;
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
    let zulip = config_with("", &env).zulip;
    assert_eq!(zulip.api_key.unwrap().expose(), "zulip-key-1");
}

#[test]
fn the_zulip_key_comes_from_the_named_variable_only() {
    let env = MapEnv::new()
        .with("ZULIP_BOT_API_KEY", "default-var")
        .with("TEAM_ZULIP_KEY", "named-var");
    let zulip = config_with("[zulip]\napi_key_env = \"TEAM_ZULIP_KEY\"\n", &env).zulip;
    assert_eq!(zulip.api_key_env, "TEAM_ZULIP_KEY");
    assert_eq!(zulip.api_key.unwrap().expose(), "named-var");

    let env = MapEnv::new().with("ZULIP_BOT_API_KEY", "default-var");
    let zulip = config_with("[zulip]\napi_key_env = \"TEAM_ZULIP_KEY\"\n", &env).zulip;
    assert_eq!(zulip.api_key, None);
}

fn model(api_key_env: Option<&str>) -> ModelConfig {
    ModelConfig {
        api: Api::OpenAiChat,
        base_url: "http://127.0.0.1:8080/v1".into(),
        model: "qwen3-coder".into(),
        api_key_env: api_key_env.map(Into::into),
        price: None,
    }
}

#[test]
fn a_model_key_is_read_from_its_variable() {
    let env = MapEnv::new().with("OPENAI_API_KEY", "sk-abc");
    let key = model(Some("OPENAI_API_KEY")).api_key(&env).unwrap();
    assert_eq!(key.unwrap().expose(), "sk-abc");
}

#[test]
fn a_model_without_a_key_variable_has_no_key() {
    let env = MapEnv::new().with("OPENAI_API_KEY", "sk-abc");
    assert_eq!(model(None).api_key(&env).unwrap(), None);
}

#[test]
fn a_missing_or_blank_model_key_is_an_error_naming_the_variable() {
    for env in [MapEnv::new(), MapEnv::new().with("OPENAI_API_KEY", " ")] {
        let err = model(Some("OPENAI_API_KEY")).api_key(&env).unwrap_err();
        assert!(
            matches!(&err, ConfigError::MissingKey { var } if var == "OPENAI_API_KEY"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the environment variable `OPENAI_API_KEY` is not set; it must hold the API key \
             (keys never live in tether.toml)"
        );
        assert!(err.problems().is_empty());
    }
}

#[test]
fn model_and_judge_keys_are_read_through_the_loaded_config() {
    let text = "[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\nmodel = \"a\"\n\
                api_key_env = \"EXEC_KEY\"\n\
                [judge]\napi = \"anthropic\"\nbase_url = \"https://h\"\nmodel = \"b\"\n\
                api_key_env = \"JUDGE_KEY\"\n";
    let env = MapEnv::new()
        .with("EXEC_KEY", "e-1")
        .with("JUDGE_KEY", "j-1");
    let config = config_with(text, &env);
    let exec = config.model.unwrap().api_key(&env).unwrap().unwrap();
    let judge = config
        .judge
        .unwrap()
        .endpoint
        .api_key(&env)
        .unwrap()
        .unwrap();
    assert_eq!((exec.expose(), judge.expose()), ("e-1", "j-1"));
}

#[test]
fn hash_maps_and_map_envs_are_environments() {
    let map: HashMap<String, String> = [("A".to_owned(), "1".to_owned())].into();
    assert_eq!(map.var("A").as_deref(), Some("1"));
    assert_eq!(map.var("B"), None);
    let env: MapEnv = [("A", "1")].into_iter().collect();
    assert_eq!(env.var("A").as_deref(), Some("1"));
    let mut env = MapEnv::new();
    env.set("B", "2");
    assert_eq!(env.var("B").as_deref(), Some("2"));
}

#[test]
fn the_process_environment_is_readable() {
    // Cargo sets this for test binaries; reading it does not mutate anything.
    assert_eq!(
        ProcessEnv.var("CARGO_PKG_NAME").as_deref(),
        Some(env!("CARGO_PKG_NAME"))
    );
    assert_eq!(ProcessEnv.var("TETHER_CONFIG_TEST_SURELY_UNSET_1F4A"), None);
}
