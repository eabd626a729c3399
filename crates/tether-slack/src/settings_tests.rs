use tether_config::Secret;

use super::{ConfigError, RawSlackSettings, SlackSettings};

fn raw() -> RawSlackSettings {
    RawSlackSettings {
        bot_token: Some(Secret::new("xoxb-1-abc")),
        app_token: Some(Secret::new("xapp-1-def")),
        channel: Some("C0123456789".into()),
        ..RawSlackSettings::with_default_envs()
    }
}

#[test]
fn complete_settings_are_accepted_with_slack_as_the_default_api() {
    let settings = SlackSettings::new(&raw()).unwrap();
    assert_eq!(settings.api_url, "https://slack.com/api");
    assert_eq!(settings.channel, "C0123456789");
    assert!(!format!("{settings:?}").contains("xoxb-1-abc"));
}

#[test]
fn every_missing_value_is_named_with_what_sets_it() {
    let raw = RawSlackSettings {
        bot_token_env: "MY_BOT".into(),
        ..RawSlackSettings::with_default_envs()
    };
    let err = SlackSettings::new(&raw).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Slack is not configured: missing the bot token (set MY_BOT), the app-level token (set SLACK_APP_TOKEN), the channel (set `slack.channel` or SLACK_CHANNEL)"
    );
}

#[test]
fn swapped_tokens_are_named_without_showing_them() {
    let mut swapped = raw();
    std::mem::swap(&mut swapped.bot_token, &mut swapped.app_token);
    let err = SlackSettings::new(&swapped).unwrap_err();
    assert!(matches!(err, ConfigError::WrongToken { .. }));
    let text = err.to_string();
    assert!(
        text.contains("SLACK_BOT_TOKEN") && text.contains("xoxb-"),
        "{text}"
    );
    assert!(!text.contains("xapp-1-def"), "{text}");
}

#[test]
fn a_channel_name_is_refused_with_how_to_find_the_id() {
    let mut named = raw();
    named.channel = Some("#agents".into());
    let err = SlackSettings::new(&named).unwrap_err();
    assert!(err.to_string().contains("Channel ID"), "{err}");
}

#[test]
fn the_api_url_loses_its_trailing_slash_and_must_be_http() {
    let mut custom = raw();
    custom.api_url = Some("http://127.0.0.1:9/api/".into());
    assert_eq!(
        SlackSettings::new(&custom).unwrap().api_url,
        "http://127.0.0.1:9/api"
    );
    custom.api_url = Some("ftp://x".into());
    assert!(matches!(
        SlackSettings::new(&custom),
        Err(ConfigError::InvalidUrl { .. })
    ));
}
