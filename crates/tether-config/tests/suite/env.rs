//! The environment overrides the file; keys come only from the environment.

use std::collections::HashMap;

use tether_config::{Api, ConfigError, Env, MapEnv, ModelConfig, ProcessEnv};

use super::test_table::PagerSettings;
use super::{config_with, problems_with};

const PAGER: &str = "[pager]\nroom = \"file-room\"\n";

/// The pager's settings `text` gives under `env`.
fn pager(text: &str, env: &MapEnv) -> PagerSettings {
    PagerSettings::of(&config_with(text, env))
}

#[test]
fn a_declared_keys_variable_overrides_the_file() {
    assert_eq!(
        pager(PAGER, &MapEnv::new()).room.as_deref(),
        Some("file-room")
    );
    let env = MapEnv::new().with("PAGER_ROOM", "env-room");
    assert_eq!(pager(PAGER, &env).room.as_deref(), Some("env-room"));
    // Without the table too, and recorded as a variable that configures.
    assert_eq!(pager("", &env).room.as_deref(), Some("env-room"));
}

#[test]
fn blank_variables_count_as_unset() {
    let env = MapEnv::new()
        .with("PAGER_ROOM", "  ")
        .with("PAGER_TOKEN", "");
    let pager = pager(PAGER, &env);
    assert_eq!(pager.room.as_deref(), Some("file-room"));
    assert_eq!(pager.token, None);
}

#[test]
fn invalid_environment_values_are_problems_naming_the_variable() {
    let env = MapEnv::new().with("PAGER_ROOM", "has spaces");
    assert_eq!(
        problems_with(PAGER, &env),
        [
            "tether.toml: pager.room: from PAGER_ROOM: must be a room's name (a-z, 0-9, -), got \
          \"has spaces\""
        ]
    );
}

#[test]
fn a_declared_secret_comes_from_the_default_variable_or_the_named_one_only() {
    let env = MapEnv::new().with("PAGER_TOKEN", "pager-key-1");
    assert_eq!(pager("", &env).token.unwrap().expose(), "pager-key-1");
    let env = env.with("TEAM_PAGER_KEY", "named-var");
    let named = pager("[pager]\ntoken_env = \"TEAM_PAGER_KEY\"\n", &env);
    assert_eq!(named.token_env, "TEAM_PAGER_KEY");
    assert_eq!(named.token.unwrap().expose(), "named-var");
    let env = MapEnv::new().with("PAGER_TOKEN", "default-var");
    let named = pager("[pager]\ntoken_env = \"TEAM_PAGER_KEY\"\n", &env);
    assert_eq!(named.token, None);
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
