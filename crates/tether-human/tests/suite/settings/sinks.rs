//! The notice sinks' tables and question escalation: values read, defaults, errors that name
//! the setting, and secrets read from the variables the file names (never echoed).

use tether_config::{Channel, EscalationTarget, MapEnv};
use tether_human::tables::email::{EmailConfig, EmailTls};
use tether_human::tables::notify_command::NotifyCommandConfig;
use tether_human::tables::ntfy::NtfyConfig;
use tether_human::tables::webhook::{WebhookConfig, WebhookFormat};

use super::{config, config_with, problems, problems_with, warnings_with};

#[test]
fn the_sinks_tables_are_read_with_their_secrets_from_named_variables() {
    let text = r#"
[human]
channels = ["terminal", "ntfy", "webhook", "email", "notify_command"]
remind_after = "30m"
escalate_after = "2h"
escalate_to = ["email:lead@example.com", "ntfy:oncall", "webhook"]

[ntfy]
server = "http://127.0.0.1:8080/"
topic = "tether-abc"
token_env = "MY_NTFY"
priority = 4
notify = ["failed"]

[webhook]
url_env = "HOOK_URL"
format = "discord"

[email]
smtp_host = "smtp.example.com"
from = "tether@example.com"
to = ["me@example.com"]
password_env = "SMTP_PW"
username_env = "SMTP_USER"

[notify_command]
program = "notify-me"
args = ["--quiet"]
timeout_secs = 5
"#;
    let env = MapEnv::new()
        .with("MY_NTFY", "tk_secret")
        .with("HOOK_URL", "https://discord.example/api/webhooks/1/xyz")
        .with("SMTP_PW", "pw")
        .with("SMTP_USER", "user");
    let c = config_with(text, &env);
    assert_eq!(
        c.human.channels,
        [
            Channel::TERMINAL,
            Channel::named("ntfy"),
            Channel::named("webhook"),
            Channel::named("email"),
            Channel::named("notify_command")
        ]
    );
    assert_eq!(c.human.remind_after_secs, Some(1800));
    assert_eq!(c.human.escalate_after_secs, Some(7200));
    assert_eq!(
        c.human.escalate_to,
        [
            EscalationTarget {
                kind: Channel::named("email"),
                arg: Some("lead@example.com".into())
            },
            EscalationTarget {
                kind: Channel::named("ntfy"),
                arg: Some("oncall".into())
            },
            EscalationTarget {
                kind: Channel::named("webhook"),
                arg: None
            },
        ]
    );
    assert_eq!(NtfyConfig::of(&c).server, "http://127.0.0.1:8080");
    assert_eq!(
        NtfyConfig::of(&c).reply_topic().as_deref(),
        Some("tether-abc-reply")
    );
    assert_eq!(
        NtfyConfig::of(&c).token.as_ref().map(|t| t.expose()),
        Some("tk_secret")
    );
    assert_eq!(NtfyConfig::of(&c).priority, 4);
    assert_eq!(WebhookConfig::of(&c).format, WebhookFormat::Discord);
    assert!(WebhookConfig::of(&c).url.is_some());
    assert_eq!(EmailConfig::of(&c).smtp_port, 587);
    assert_eq!(EmailConfig::of(&c).tls, EmailTls::StartTls);
    assert_eq!(
        EmailConfig::of(&c).password.as_ref().map(|p| p.expose()),
        Some("pw")
    );
    assert_eq!(NotifyCommandConfig::of(&c).timeout_secs, 5);
    assert!(c.key_vars().contains(&"HOOK_URL".to_owned()));
    assert!(c.key_vars().contains(&"SMTP_PW".to_owned()));
    let shown = format!("{c:?}");
    for secret in ["tk_secret", "discord.example", "pw\"", "user\""] {
        assert!(!shown.contains(secret), "{secret} shown in {shown}");
    }
}

#[test]
fn the_ntfy_topic_may_come_from_a_variable_kept_from_the_agent_and_never_shown() {
    let text = r#"
[human]
channels = ["ntfy"]

[ntfy]
topic = "in-the-file"
topic_env = "MY_TOPIC"
"#;
    let c = config_with(text, &MapEnv::new().with("MY_TOPIC", "hidden-topic-42"));
    assert_eq!(NtfyConfig::of(&c).topic.as_deref(), Some("hidden-topic-42"));
    assert!(NtfyConfig::of(&c).topic_from_env);
    assert_eq!(
        NtfyConfig::of(&c).reply_topic().as_deref(),
        Some("hidden-topic-42-reply")
    );
    assert!(c.key_vars().contains(&"MY_TOPIC".to_owned()));
    let shown = format!("{c:?}");
    assert!(!shown.contains("hidden-topic-42"), "{shown}");
    // The file's topic while the variable is unset, said as such.
    let c = config_with(text, &MapEnv::new());
    assert_eq!(NtfyConfig::of(&c).topic.as_deref(), Some("in-the-file"));
    assert!(!NtfyConfig::of(&c).topic_from_env);
    // Unset with no topic in the file: named as what to set.
    let none = "[human]\nchannels = [\"ntfy\"]\n[ntfy]\ntopic_env = \"MY_TOPIC\"\n";
    let c = config_with(none, &MapEnv::new());
    assert_eq!(
        NtfyConfig::of(&c).missing(),
        ["the topic (set MY_TOPIC, named by `[ntfy] topic_env`)"]
    );
    // A value that is no topic is reported without being said.
    let bad = problems_with(none, &MapEnv::new().with("MY_TOPIC", "not a topic!"));
    assert_eq!(
        bad,
        [
            "tether.toml:4: ntfy.topic_env: MY_TOPIC must hold an ntfy topic: 1 to 64 letters, \
          digits, _ or -"
        ]
    );
}

#[test]
fn defaults_when_the_tables_are_absent() {
    let c = config("");
    assert_eq!(NtfyConfig::of(&c).server, NtfyConfig::DEFAULT_SERVER);
    assert_eq!(NtfyConfig::of(&c).topic, None);
    assert_eq!(WebhookConfig::of(&c).format, WebhookFormat::Json);
    assert_eq!(NotifyCommandConfig::of(&c).timeout_secs, 10);
    assert_eq!(c.human.remind_after_secs, None);
    assert!(c.human.escalate_to.is_empty());
}

#[test]
fn wrong_values_name_the_setting() {
    let text = r#"
[human]
remind_after = "soon"
escalate_after = "2h"
escalate_to = ["pager", "email:not-an-address"]

[ntfy]
topic = "has spaces"
priority = 9
token = "tk_in_the_file"

[webhook]
url = "ftp://example.com/hook"
format = "teams"

[email]
smtp_port = 70000
tls = "ssl"
to = ["nobody"]
"#;
    insta::assert_snapshot!(problems(text).join("\n"));
}

#[test]
fn a_listed_sink_without_its_settings_is_a_warning_naming_them() {
    let text = r#"
[human]
channels = ["ntfy", "webhook", "email", "notify_command"]

[ntfy]
token_env = "NTFY_TOKEN"

[webhook]
url_env = "TETHER_WEBHOOK_URL"
"#;
    insta::assert_snapshot!(warnings_with(text, &MapEnv::new()).join("\n"));
}

#[test]
fn escalation_needs_both_its_settings() {
    let all = problems_with("[human]\nescalate_after = \"1h\"\n", &MapEnv::new());
    assert_eq!(
        all,
        [
            "tether.toml:2: human.escalate_after: has no effect without `human.escalate_to` (the \
          sinks to offer the question on then)"
        ]
    );
}
