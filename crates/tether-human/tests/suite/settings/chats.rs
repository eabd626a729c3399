//! `[slack]` and `[telegram]`: values, tokens from the variables the tables name, the settings a
//! listed channel lacks, and the errors naming each setting.

use tether_config::MapEnv;

use super::{config_with, warnings_with};

#[test]
fn slack_telegram_and_notify_are_read_with_their_tokens_from_the_environment() {
    use tether_config::{NoticeKind, NotifyConfig};
    use tether_slack::SlackConfig;
    use tether_telegram::TelegramConfig;
    let text = r#"
[human]
channels = ["slack", "telegram"]

[slack]
channel = "C0123ABCD"
bot_token_env = "MY_SLACK_BOT"
api_url = "http://127.0.0.1:9/api"
notify = ["done"]

[telegram]
chat_id = "-1001234567890"

[notify]
on = ["done", "paused", "signed_off"]
desktop = false
rejected_after = 5
"#;
    let env = MapEnv::new()
        .with("MY_SLACK_BOT", "xoxb-1")
        .with("SLACK_APP_TOKEN", "xapp-1")
        .with("TELEGRAM_BOT_TOKEN", "123:abc")
        .with("TELEGRAM_CHAT_ID", "@tether_questions");
    let config = config_with(text, &env);
    assert_eq!(
        *SlackConfig::of(&config),
        SlackConfig {
            channel: Some("C0123ABCD".into()),
            bot_token_env: "MY_SLACK_BOT".into(),
            app_token_env: "SLACK_APP_TOKEN".into(),
            bot_token: Some(tether_config::Secret::new("xoxb-1")),
            app_token: Some(tether_config::Secret::new("xapp-1")),
            api_url: "http://127.0.0.1:9/api".into(),
            notify: Some(vec![NoticeKind::Done]),
        }
    );
    assert_eq!(
        *TelegramConfig::of(&config),
        TelegramConfig {
            chat_id: Some("@tether_questions".into()),
            bot_token: Some(tether_config::Secret::new("123:abc")),
            ..TelegramConfig::default()
        }
    );
    assert_eq!(
        config.notify,
        NotifyConfig {
            on: vec![NoticeKind::Done, NoticeKind::Paused, NoticeKind::SignedOff],
            desktop: false,
            rejected_after: 5,
        }
    );
    for var in ["MY_SLACK_BOT", "SLACK_APP_TOKEN", "TELEGRAM_BOT_TOKEN"] {
        assert!(config.key_vars().contains(&var.to_owned()), "{var}");
    }
}

#[test]
fn slack_and_telegram_channels_without_settings_name_each_missing_value_and_variable() {
    let text = "[human]\nchannels = [\"slack\", \"telegram\"]\n";
    assert_eq!(
        warnings_with(text, &MapEnv::new()),
        [
            "tether.toml:2: human.channels: \"slack\" is a channel but its settings are missing: \
             `slack.channel` (or SLACK_CHANNEL), the bot token (set SLACK_BOT_TOKEN), the \
             app-level token for Socket Mode (set SLACK_APP_TOKEN)",
            "tether.toml:2: human.channels: \"telegram\" is a channel but its settings are \
             missing: `telegram.chat_id` (or TELEGRAM_CHAT_ID), the bot token (set \
             TELEGRAM_BOT_TOKEN)"
        ]
    );
}

#[test]
fn a_telegram_chat_id_must_be_a_number_or_a_name() {
    let problems = super::problems("[telegram]\nchat_id = \"my chat\"\n");
    assert!(
        problems[0].contains("telegram.chat_id: must be a chat id"),
        "{problems:?}"
    );
}

#[test]
fn a_slack_channel_must_be_its_id_not_its_name() {
    let problems = super::problems("[slack]\nchannel = \"#general\"\n");
    assert!(
        problems[0].contains("slack.channel: must be the channel's id"),
        "{problems:?}"
    );
}
