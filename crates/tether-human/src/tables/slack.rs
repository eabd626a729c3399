//! `[slack]`: the Slack channel's table, read into [`SlackConfig`].

use std::sync::Arc;

use tether_config::{KeyDecl, Role, TableDecl, TableReader, values};
use tether_slack::SlackConfig;

/// `[slack]`.
pub const TABLE: TableDecl = TableDecl {
    name: "slack",
    intro: "The Slack channel, over Socket Mode (no public URL needed); SLACK_CHANNEL overrides \
            channel.",
    role: Role::Channel,
    keys: &[
        KeyDecl::new(
            "channel",
            "The channel questions go to, one thread per conversation: its id (C...; a name will \
             not do).",
            "\"C0123ABCD\"",
            "\"C0456EFGH\"",
        )
        .overridden_by(SlackConfig::CHANNEL_ENV),
        KeyDecl::new(
            "bot_token_env",
            "The NAME of the environment variable holding the bot token (xoxb-...).",
            "\"SLACK_BOT_TOKEN\"",
            "\"S_BOT\"",
        )
        .active()
        .secret_var(Some(SlackConfig::DEFAULT_BOT_TOKEN_ENV)),
        KeyDecl::new(
            "app_token_env",
            "The NAME of the one holding the app-level token with connections:write (xapp-...).",
            "\"SLACK_APP_TOKEN\"",
            "\"S_APP\"",
        )
        .active()
        .secret_var(Some(SlackConfig::DEFAULT_APP_TOKEN_ENV)),
        KeyDecl::new(
            "api_url",
            "The Web API's base URL: an http:// or https:// URL.",
            "\"https://slack.com/api\"",
            "\"http://127.0.0.1:2\"",
        ),
        super::notify(
            "The notices posted in the channel, when not [notify] on.",
            "[\"done\", \"paused\"]",
        ),
    ],
    advice: Some("bot_token_env"),
    read: |t| Arc::new(read(t)),
    default: || Arc::new(SlackConfig::default()),
};

/// Reads `[slack]` (if present) and applies the environment; names what a listed channel
/// lacks.
fn read(t: &mut TableReader<'_, '_>) -> SlackConfig {
    let mut out = SlackConfig::default();
    if let Some(var) = t.secret_var("bot_token_env") {
        out.bot_token_env = var;
    }
    if let Some(var) = t.secret_var("app_token_env") {
        out.app_token_env = var;
    }
    out.channel = t.string("channel", channel_id);
    if let Some(url) = t.string("api_url", values::http_url) {
        out.api_url = url;
    }
    out.notify = t.notices("notify");
    out.bot_token = t.secret("bot_token_env");
    out.app_token = t.secret("app_token_env");
    if out.channel.is_none() {
        t.lacks(format!("`slack.channel` (or {})", SlackConfig::CHANNEL_ENV));
    }
    if out.bot_token.is_none() {
        t.lacks(format!("the bot token (set {})", out.bot_token_env));
    }
    if out.app_token.is_none() {
        t.lacks(format!(
            "the app-level token for Socket Mode (set {})",
            out.app_token_env
        ));
    }
    out
}

/// A Slack conversation id: `C…` (public), `G…` (private) or `D…` (direct), letters and digits.
fn channel_id(value: &str) -> Result<(), String> {
    let ok = value.len() >= 9
        && value.starts_with(['C', 'G', 'D'])
        && value
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "must be the channel's id such as \"C0123ABCD\" (in Slack: the channel's name → \
             About → Channel ID), got {value:?}"
        ))
    }
}
