//! Keys never live in files, and never show up in `Debug` or error text.

use std::fs;

use tether_config::{MapEnv, Secret, load};

use super::test_table::{PagerSettings, schema};
use super::{problem, problems};

#[test]
fn a_secret_debugs_as_stars_and_exposes_on_request() {
    let secret = Secret::new("sk-very-secret");
    assert_eq!(format!("{secret:?}"), "Secret(***)");
    assert_eq!(format!("{secret:#?}"), "Secret(***)");
    assert_eq!(secret.expose(), "sk-very-secret");
}

#[test]
fn a_loaded_configs_debug_never_shows_a_key() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\nmodel = \"m\"\n\
         api_key_env = \"OPENAI_API_KEY\"\n[human]\nchannels = [\"pager\"]\n\
         [pager]\nurl = \"https://pager.example/pager-secret-0042\"\nroom = \"s\"\n",
    )
    .unwrap();
    let env = MapEnv::new()
        .with("PAGER_TOKEN", "pager-secret-4711")
        .with("OPENAI_API_KEY", "openai-secret-0815");
    let loaded = load(&schema(), dir.path(), &env).unwrap();
    let pager = PagerSettings::of(&loaded.config);
    assert!(pager.token.is_some(), "the key was not loaded");
    assert!(pager.url.is_some(), "the URL was not loaded");
    for shown in [
        format!("{loaded:?}"),
        format!("{loaded:#?}"),
        format!("{env:?}"),
    ] {
        assert!(!shown.contains("pager-secret-4711"), "{shown}");
        assert!(!shown.contains("pager-secret-0042"), "{shown}");
        assert!(!shown.contains("openai-secret-0815"), "{shown}");
    }
    let key = loaded.config.model.unwrap().api_key(&env).unwrap().unwrap();
    assert!(!format!("{key:?}").contains("openai-secret-0815"));
}

#[test]
fn a_literal_api_key_is_an_error_naming_the_variable_to_set() {
    let model = "[model]\napi = \"anthropic\"\nbase_url = \"https://h\"\nmodel = \"m\"\n";
    assert_eq!(
        problem(&format!("{model}api_key = \"sk-ant-123\"\n")),
        "tether.toml:5: model.api_key: API keys never live in files; remove `api_key`, then put \
         the key in the environment variable ANTHROPIC_API_KEY and set \
         `model.api_key_env = \"ANTHROPIC_API_KEY\"`"
    );
    assert_eq!(
        problem(&format!(
            "{model}api_key_env = \"MY_KEY\"\napi_key = \"sk-ant-123\"\n"
        )),
        "tether.toml:6: model.api_key: API keys never live in files; remove `api_key`, then set \
         the environment variable MY_KEY instead (named by `model.api_key_env`)"
    );
}

#[test]
fn a_literal_api_key_in_judge_and_a_declared_table_is_an_error_too() {
    let judge = "[judge]\napi = \"openai-chat\"\nbase_url = \"https://h\"\nmodel = \"m\"\n";
    assert_eq!(
        problem(&format!("{judge}api_key = \"sk-1\"\n")),
        "tether.toml:5: judge.api_key: API keys never live in files; remove `api_key`, then put \
         the key in the environment variable OPENAI_API_KEY and set \
         `judge.api_key_env = \"OPENAI_API_KEY\"`"
    );
    assert_eq!(
        problem("[pager]\napi_key = \"zk-1\"\n"),
        "tether.toml:2: pager.api_key: API keys never live in files; remove `api_key`, then set \
         the environment variable PAGER_TOKEN instead (named by `pager.token_env`)"
    );
    assert_eq!(
        problem("[pager]\ntoken_env = \"ZK\"\ntoken = \"zk-1\"\n"),
        "tether.toml:3: pager.token: API keys never live in files; remove `token`, then set \
         the environment variable ZK instead (named by `pager.token_env`)"
    );
}

#[test]
fn no_problem_ever_echoes_a_key_value() {
    let text = "api_key = \"sk-top-1\"\n[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\n\
                model = \"m\"\napi_key = \"sk-model-2\"\napiKey = \"sk-model-3\"\n\
                [pager]\napi-key = \"sk-pager-4\"\ntoken_env = \"sk-pager-5\"\n";
    let all = problems(text);
    assert_eq!(all.len(), 5, "{all:#?}");
    for shown in &all {
        assert!(!shown.contains("sk-"), "{shown}");
        assert!(shown.contains("never"), "{shown}");
    }
}

#[test]
fn a_key_looking_name_elsewhere_is_just_an_unknown_key() {
    assert_eq!(
        problem("[loop]\ntoken = \"x\"\n"),
        "tether.toml:2: loop.token: unknown key; [loop] has max_iterations, max_tokens, max_cost_usd, max_duration, escalate_after_rejects, spin_guard, \
         oscillation_repeats, reminder_after, clean_end_reminders, verify_timeout_secs, \
         max_consecutive_failures, context"
    );
    assert_eq!(
        problem("api_key = \"sk-1\"\n"),
        "tether.toml:1: api_key: API keys never live in files; remove `api_key`, then put the \
         key in an environment variable named by `model.api_key_env`"
    );
}

#[test]
fn the_key_variables_are_listed_once_each() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\nmodel = \"m\"\n\
         api_key_env = \"OPENAI_API_KEY\"\n\
         [judge]\napi = \"anthropic\"\nbase_url = \"http://j\"\nmodel = \"j\"\n\
         api_key_env = \"ANTHROPIC_API_KEY\"\n",
    )
    .unwrap();
    let env = MapEnv::new()
        .with("OPENAI_API_KEY", "a")
        .with("ANTHROPIC_API_KEY", "b");
    let config = load(&schema(), dir.path(), &env).unwrap().config;
    assert_eq!(
        config.key_vars(),
        ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PAGER_TOKEN"]
    );
    let same = tether_config::Config {
        judge: config.judge.clone().map(|mut j| {
            j.endpoint.api_key_env = Some("OPENAI_API_KEY".into());
            j
        }),
        ..config
    };
    assert_eq!(same.key_vars(), ["OPENAI_API_KEY", "PAGER_TOKEN"]);
}
