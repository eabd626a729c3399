use tether_config::Secret;

use crate::ZulipConfig;

use super::{ConfigError, ZulipSettings};

fn full() -> ZulipConfig {
    ZulipConfig {
        server_url: Some("https://chat.example.com/".into()),
        bot_email: Some("bot@example.com".into()),
        stream: Some("tether".into()),
        api_key: Some(Secret::new("k3y")),
        ..ZulipConfig::default()
    }
}

#[test]
fn every_missing_value_is_named_with_its_variable() {
    let err = ZulipSettings::from_config(&ZulipConfig::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Zulip is not configured: missing the server URL (set ZULIP_SERVER_URL or \
         `zulip.server_url`), the bot email (set ZULIP_BOT_EMAIL or `zulip.bot_email`), the bot \
         API key (set ZULIP_BOT_API_KEY), the stream (set ZULIP_STREAM or `zulip.stream`)"
    );
}

#[test]
fn blank_values_count_as_missing_and_a_custom_key_variable_is_named() {
    let config = ZulipConfig {
        stream: Some("   ".into()),
        api_key: Some(Secret::new("")),
        api_key_env: "MY_ZULIP_KEY".into(),
        ..full()
    };
    let ConfigError::Missing { missing } = ZulipSettings::from_config(&config).unwrap_err() else {
        panic!("expected Missing");
    };
    let set_by: Vec<_> = missing.iter().map(|m| m.set_by.as_str()).collect();
    assert_eq!(set_by, ["MY_ZULIP_KEY", "ZULIP_STREAM or `zulip.stream`"]);
}

#[test]
fn a_complete_config_is_trimmed_and_normalised() {
    let settings = ZulipSettings::from_config(&full()).unwrap();
    assert_eq!(settings.server_url, "https://chat.example.com");
    let pasted = ZulipConfig {
        server_url: Some("https://chat.example.com/zulip/api/v1/".into()),
        ..full()
    };
    let settings = ZulipSettings::from_config(&pasted).unwrap();
    assert_eq!(settings.server_url, "https://chat.example.com/zulip");
}

#[test]
fn bad_urls_and_emails_are_explained() {
    for url in [
        "chat.example.com",
        "ftp://chat.example.com",
        "https://",
        "http://h/?q=1",
    ] {
        let config = ZulipConfig {
            server_url: Some(url.into()),
            ..full()
        };
        let err = ZulipSettings::from_config(&config).unwrap_err();
        assert!(
            matches!(err, ConfigError::InvalidUrl { .. }),
            "{url}: {err}"
        );
        assert!(err.to_string().contains("ZULIP_SERVER_URL"), "{err}");
    }
    let config = ZulipConfig {
        bot_email: Some("bot".into()),
        ..full()
    };
    let err = ZulipSettings::from_config(&config).unwrap_err();
    assert!(err.to_string().contains("ZULIP_BOT_EMAIL"), "{err}");
}

#[test]
fn the_key_never_shows_in_debug_or_errors() {
    let settings = ZulipSettings::from_config(&full()).unwrap();
    assert!(!format!("{settings:?}").contains("k3y"));
    let config = ZulipConfig {
        server_url: Some("nope".into()),
        ..full()
    };
    let err = ZulipSettings::from_config(&config).unwrap_err();
    assert!(!format!("{err} {err:?}").contains("k3y"));
}
