//! Misconfiguration is a clear error naming what is missing, never a panic.

use tether_config::Secret;
use tether_zulip::ZulipConfig;
use tether_zulip::{ConfigError, ZulipClient, ZulipError};

#[test]
fn an_unconfigured_client_names_every_missing_variable() {
    let err = ZulipClient::from_config(&ZulipConfig::default()).unwrap_err();
    let text = err.to_string();
    for variable in [
        "ZULIP_SERVER_URL",
        "ZULIP_BOT_EMAIL",
        "ZULIP_BOT_API_KEY",
        "ZULIP_STREAM",
    ] {
        assert!(text.contains(variable), "{variable} missing from: {text}");
    }
    assert!(
        matches!(err, ZulipError::Config(ConfigError::Missing { ref missing }) if missing.len() == 4)
    );
}

#[test]
fn only_the_missing_values_are_named() {
    let config = ZulipConfig {
        server_url: Some("https://chat.example.com".into()),
        bot_email: Some("bot@example.com".into()),
        stream: None,
        api_key: Some(Secret::new("k")),
        ..ZulipConfig::default()
    };
    let err = ZulipClient::from_config(&config).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Zulip is not configured: missing the stream (set ZULIP_STREAM or `zulip.stream`)"
    );
}

#[test]
fn a_complete_config_builds_a_client_for_an_https_server() {
    let config = ZulipConfig {
        server_url: Some("https://chat.example.com".into()),
        bot_email: Some("bot@example.com".into()),
        stream: Some("tether".into()),
        api_key: Some(Secret::new("k")),
        ..ZulipConfig::default()
    };
    let client = ZulipClient::from_config(&config).unwrap();
    assert_eq!(client.stream(), "tether");
}
