//! `[zulip]`: the Zulip channel's table, read into [`ZulipConfig`].

use std::sync::Arc;

use tether_config::{KeyDecl, Role, TableDecl, TableReader, values};
use tether_zulip::ZulipConfig;

/// `[zulip]`.
pub const TABLE: TableDecl = TableDecl {
    name: "zulip",
    intro: "The Zulip channel; ZULIP_SERVER_URL, ZULIP_BOT_EMAIL and ZULIP_STREAM override these \
            values.",
    role: Role::Channel,
    keys: &[
        KeyDecl::new(
            "server_url",
            "The Zulip server: an http:// or https:// URL.",
            "\"https://chat.example.com\"",
            "\"https://chat.example\"",
        )
        .overridden_by(ZulipConfig::SERVER_URL_ENV),
        KeyDecl::new(
            "bot_email",
            "The bot's email address.",
            "\"tether-bot@chat.example.com\"",
            "\"bot@example.com\"",
        )
        .overridden_by(ZulipConfig::BOT_EMAIL_ENV),
        KeyDecl::new(
            "stream",
            "The stream questions go to, one topic per conversation (not empty).",
            "\"my-repo\"",
            "\"elsewhere\"",
        )
        .overridden_by(ZulipConfig::STREAM_ENV),
        KeyDecl::new(
            "api_key_env",
            "The NAME of the environment variable holding the bot's API key.",
            "\"ZULIP_BOT_API_KEY\"",
            "\"Z_KEY\"",
        )
        .active()
        .secret_var(Some(ZulipConfig::DEFAULT_API_KEY_ENV)),
        super::notify(
            "The notices posted in the stream, when not [notify] on (same names).",
            "[\"done\", \"paused\"]",
        ),
    ],
    advice: Some("api_key_env"),
    read: |t| Arc::new(read(t)),
    default: || Arc::new(ZulipConfig::default()),
};

/// Reads `[zulip]` (if present) and applies the environment; names what a listed channel
/// lacks (a value given but invalid is a problem of its own, not also missing).
fn read(t: &mut TableReader<'_, '_>) -> ZulipConfig {
    let mut out = ZulipConfig::default();
    if let Some(var) = t.secret_var("api_key_env") {
        out.api_key_env = var;
    }
    out.server_url = t.string("server_url", values::http_url);
    out.bot_email = t.string("bot_email", values::email);
    out.stream = t.string("stream", values::non_empty);
    out.notify = t.notices("notify");
    out.api_key = t.secret("api_key_env");
    for (key, var) in [
        ("server_url", ZulipConfig::SERVER_URL_ENV),
        ("bot_email", ZulipConfig::BOT_EMAIL_ENV),
        ("stream", ZulipConfig::STREAM_ENV),
    ] {
        if !t.given(key) {
            t.lacks(format!("`zulip.{key}` (or {var})"));
        }
    }
    if out.api_key.is_none() {
        t.lacks(format!("the bot's API key (set {})", out.api_key_env));
    }
    out
}
