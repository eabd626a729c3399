//! The variables of every channel's and sink's secrets are tether's keys: listed once each,
//! kept from every child, said back as the setting naming them.

use std::fs;

use tether_config::{MapEnv, load};
use tether_human::registry::schema;

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
        [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "ZULIP_BOT_API_KEY",
            "SLACK_BOT_TOKEN",
            "SLACK_APP_TOKEN",
            "TELEGRAM_BOT_TOKEN"
        ]
    );
    let same = tether_config::Config {
        judge: config.judge.clone().map(|mut j| {
            j.endpoint.api_key_env = Some("OPENAI_API_KEY".into());
            j
        }),
        ..config
    };
    assert_eq!(
        same.key_vars(),
        [
            "OPENAI_API_KEY",
            "ZULIP_BOT_API_KEY",
            "SLACK_BOT_TOKEN",
            "SLACK_APP_TOKEN",
            "TELEGRAM_BOT_TOKEN"
        ]
    );
}
