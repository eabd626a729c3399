//! `[telegram]`: the Telegram channel's table, read into [`TelegramConfig`].

use std::sync::Arc;

use tether_config::{KeyDecl, Role, TableDecl, TableReader, values};
use tether_telegram::TelegramConfig;

/// `[telegram]`.
pub const TABLE: TableDecl = TableDecl {
    name: "telegram",
    intro: "The Telegram channel, over Bot API long polling; TELEGRAM_CHAT_ID overrides chat_id.",
    role: Role::Channel,
    keys: &[
        KeyDecl::new(
            "chat_id",
            "The chat questions go to: a chat id (\"-1001234567890\") or \"@channelname\".",
            "\"-1001234567890\"",
            "\"-100123\"",
        )
        .overridden_by(TelegramConfig::CHAT_ID_ENV),
        KeyDecl::new(
            "bot_token_env",
            "The NAME of the environment variable holding the bot token (from BotFather).",
            "\"TELEGRAM_BOT_TOKEN\"",
            "\"T_BOT\"",
        )
        .active()
        .secret_var(Some(TelegramConfig::DEFAULT_BOT_TOKEN_ENV)),
        KeyDecl::new(
            "api_url",
            "The Bot API's base URL: an http:// or https:// URL.",
            "\"https://api.telegram.org\"",
            "\"http://127.0.0.1:2\"",
        ),
        super::notify(
            "The notices sent to the chat, when not [notify] on.",
            "[\"done\", \"paused\"]",
        ),
    ],
    advice: Some("bot_token_env"),
    read: |t| Arc::new(read(t)),
    default: || Arc::new(TelegramConfig::default()),
};

/// Reads `[telegram]` (if present) and applies the environment; names what a listed channel
/// lacks.
fn read(t: &mut TableReader<'_, '_>) -> TelegramConfig {
    let mut out = TelegramConfig::default();
    if let Some(var) = t.secret_var("bot_token_env") {
        out.bot_token_env = var;
    }
    out.chat_id = t.string("chat_id", chat_id);
    if let Some(url) = t.string("api_url", values::http_url) {
        out.api_url = url;
    }
    out.notify = t.notices("notify");
    out.bot_token = t.secret("bot_token_env");
    if out.chat_id.is_none() {
        t.lacks(format!(
            "`telegram.chat_id` (or {})",
            TelegramConfig::CHAT_ID_ENV
        ));
    }
    if out.bot_token.is_none() {
        t.lacks(format!("the bot token (set {})", out.bot_token_env));
    }
    out
}

/// A Telegram chat id: a whole number (negative for groups) or `@name`.
fn chat_id(value: &str) -> Result<(), String> {
    let numeric = value.strip_prefix('-').unwrap_or(value);
    let ok = (!numeric.is_empty() && numeric.bytes().all(|b| b.is_ascii_digit()))
        || value.strip_prefix('@').is_some_and(|name| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "must be a chat id such as \"-1001234567890\" or \"@channelname\", got {value:?}"
        ))
    }
}
