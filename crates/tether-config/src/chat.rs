//! The chat channels beyond Zulip (`[slack]`, `[telegram]`) and what a run tells its channels
//! unprompted (`[notify]`): their types, defaults, schema walk and completeness checks.
//!
//! Tokens are never in the file: each table names the environment variables that hold them
//! (`bot_token_env`, `app_token_env`), read at load into [`Secret`]s. A channel listed in
//! `human.channels` without what it needs is a warning naming the missing setting or variable,
//! not an error: the run goes on without that channel and `ask_human` says what to fix.

use crate::env::{Env, non_empty, non_empty_key};
use crate::reader::{Reader, Table};
use crate::{Secret, values};

/// Something a run tells its channels without being asked (`[notify] on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// The run finished: every goal signed off, or the Ralph loop completed.
    Done,
    /// The run paused for a person (a budget spent, blocked, the judge unavailable, the spin
    /// guard); the notice carries the `tether resume` command.
    Paused,
    /// The run stopped on a failure (failed iterations in a row, an error).
    Failed,
    /// A goal was signed off.
    SignedOff,
    /// A goal's sign-off was rejected `[notify] rejected_after` times in a row.
    Rejected,
}

impl NoticeKind {
    /// Every kind with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, NoticeKind); 5] = [
        ("done", NoticeKind::Done),
        ("paused", NoticeKind::Paused),
        ("failed", NoticeKind::Failed),
        ("signed_off", NoticeKind::SignedOff),
        ("rejected", NoticeKind::Rejected),
    ];

    /// The spelling in `tether.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Done => "done",
            NoticeKind::Paused => "paused",
            NoticeKind::Failed => "failed",
            NoticeKind::SignedOff => "signed_off",
            NoticeKind::Rejected => "rejected",
        }
    }
}

/// What a run tells its channels unprompted (`[notify]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The notices every channel gets unless its own table lists others (`notify = [...]` in
    /// `[zulip]`, `[slack]`, `[telegram]`). Default: `done` and `paused` (the rest is chat
    /// noise unless asked for).
    pub on: Vec<NoticeKind>,
    /// Whether the terminal user also gets a desktop notification (freedesktop, where a
    /// notification service is running).
    pub desktop: bool,
    /// Rejections of one goal in a row that make a `rejected` notice.
    pub rejected_after: u32,
}

impl NotifyConfig {
    /// Default for `notify.rejected_after`.
    pub const DEFAULT_REJECTED_AFTER: u32 = 3;
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            on: vec![NoticeKind::Done, NoticeKind::Paused],
            desktop: true,
            rejected_after: Self::DEFAULT_REJECTED_AFTER,
        }
    }
}

/// The Slack channel's settings (`[slack]` plus environment), over Socket Mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackConfig {
    /// The channel questions are posted to: its id (`C0123ABCD`, from the channel's details in
    /// Slack; `SLACK_CHANNEL` overrides). A name is not enough: threads are read by id.
    pub channel: Option<String>,
    /// The NAME of the variable holding the bot token (`xoxb-…`).
    pub bot_token_env: String,
    /// The NAME of the variable holding the app-level token (`xapp-…`, `connections:write`).
    pub app_token_env: String,
    /// The bot token, read from `bot_token_env` at load.
    pub bot_token: Option<Secret>,
    /// The app-level token, read from `app_token_env` at load.
    pub app_token: Option<Secret>,
    /// The Web API's base URL (a test server's, in tests).
    pub api_url: String,
    /// The notices this channel gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl SlackConfig {
    /// Default for `slack.bot_token_env`.
    pub const DEFAULT_BOT_TOKEN_ENV: &'static str = "SLACK_BOT_TOKEN";
    /// Default for `slack.app_token_env`.
    pub const DEFAULT_APP_TOKEN_ENV: &'static str = "SLACK_APP_TOKEN";
    /// Variable overriding `slack.channel`.
    pub const CHANNEL_ENV: &'static str = "SLACK_CHANNEL";
    /// Default for `slack.api_url`.
    pub const DEFAULT_API_URL: &'static str = "https://slack.com/api";
}

impl Default for SlackConfig {
    fn default() -> Self {
        SlackConfig {
            channel: None,
            bot_token_env: Self::DEFAULT_BOT_TOKEN_ENV.to_owned(),
            app_token_env: Self::DEFAULT_APP_TOKEN_ENV.to_owned(),
            bot_token: None,
            app_token: None,
            api_url: Self::DEFAULT_API_URL.to_owned(),
            notify: None,
        }
    }
}

/// The Telegram channel's settings (`[telegram]` plus environment), over Bot API long polling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramConfig {
    /// The chat questions go to: a chat id such as `-1001234567890` or `@channelname`
    /// (`TELEGRAM_CHAT_ID` overrides).
    pub chat_id: Option<String>,
    /// The NAME of the variable holding the bot token (from BotFather).
    pub bot_token_env: String,
    /// The bot token, read from `bot_token_env` at load.
    pub bot_token: Option<Secret>,
    /// The Bot API's base URL (a test server's, in tests).
    pub api_url: String,
    /// The notices this channel gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl TelegramConfig {
    /// Default for `telegram.bot_token_env`.
    pub const DEFAULT_BOT_TOKEN_ENV: &'static str = "TELEGRAM_BOT_TOKEN";
    /// Variable overriding `telegram.chat_id`.
    pub const CHAT_ID_ENV: &'static str = "TELEGRAM_CHAT_ID";
    /// Default for `telegram.api_url`.
    pub const DEFAULT_API_URL: &'static str = "https://api.telegram.org";
}

impl Default for TelegramConfig {
    fn default() -> Self {
        TelegramConfig {
            chat_id: None,
            bot_token_env: Self::DEFAULT_BOT_TOKEN_ENV.to_owned(),
            bot_token: None,
            api_url: Self::DEFAULT_API_URL.to_owned(),
            notify: None,
        }
    }
}

/// `(min, max)` of `notify.rejected_after`.
const REJECTED_AFTER: (i64, i64) = (1, 100);

/// Reads `[notify]`.
pub(crate) fn read_notify(r: &mut Reader, t: &Table, out: &mut NotifyConfig) {
    r.unknown_keys(t, crate::keys::NOTIFY, None);
    if let Some(on) = r.choice_list(t, "on", &NoticeKind::CHOICES) {
        out.on = on;
    }
    if let Some(desktop) = r.bool(t, "desktop") {
        out.desktop = desktop;
    }
    if let Some(n) = r.int(t, "rejected_after", REJECTED_AFTER.0, REJECTED_AFTER.1) {
        out.rejected_after = n;
    }
}

/// A channel table's own `notify = [...]`.
pub(crate) fn read_channel_notify(r: &mut Reader, t: &Table) -> Option<Vec<NoticeKind>> {
    r.choice_list(t, "notify", &NoticeKind::CHOICES)
}

/// Reads `[slack]` (if present) and applies the environment.
pub(crate) fn read_slack(r: &mut Reader, t: Option<&Table>, env: &dyn Env, out: &mut SlackConfig) {
    if let Some(t) = t {
        let bot = r.string(t, "bot_token_env", values::env_var_name);
        let advice = format!(
            "set the environment variable {} instead (named by `slack.bot_token_env`)",
            bot.as_deref().unwrap_or(SlackConfig::DEFAULT_BOT_TOKEN_ENV)
        );
        r.unknown_keys(t, crate::keys::SLACK, Some(&advice));
        if let Some(var) = bot {
            out.bot_token_env = var;
        }
        if let Some(var) = r.string(t, "app_token_env", values::env_var_name) {
            out.app_token_env = var;
        }
        out.channel = r.string(t, "channel", slack_channel_id);
        if let Some(url) = r.string(t, "api_url", values::http_url) {
            out.api_url = url;
        }
        out.notify = read_channel_notify(r, t);
    }
    override_from_env(
        r,
        env,
        (SlackConfig::CHANNEL_ENV, "slack.channel"),
        slack_channel_id,
        &mut out.channel,
    );
    out.bot_token = non_empty_key(env, &out.bot_token_env).map(Secret::new);
    out.app_token = non_empty_key(env, &out.app_token_env).map(Secret::new);
}

/// Reads `[telegram]` (if present) and applies the environment.
pub(crate) fn read_telegram(
    r: &mut Reader,
    t: Option<&Table>,
    env: &dyn Env,
    out: &mut TelegramConfig,
) {
    if let Some(t) = t {
        let bot = r.string(t, "bot_token_env", values::env_var_name);
        let advice = format!(
            "set the environment variable {} instead (named by `telegram.bot_token_env`)",
            bot.as_deref()
                .unwrap_or(TelegramConfig::DEFAULT_BOT_TOKEN_ENV)
        );
        r.unknown_keys(t, crate::keys::TELEGRAM, Some(&advice));
        if let Some(var) = bot {
            out.bot_token_env = var;
        }
        out.chat_id = r.string(t, "chat_id", chat_id);
        if let Some(url) = r.string(t, "api_url", values::http_url) {
            out.api_url = url;
        }
        out.notify = read_channel_notify(r, t);
    }
    override_from_env(
        r,
        env,
        (TelegramConfig::CHAT_ID_ENV, "telegram.chat_id"),
        chat_id,
        &mut out.chat_id,
    );
    out.bot_token = non_empty_key(env, &out.bot_token_env).map(Secret::new);
}

/// A Slack conversation id: `C…` (public), `G…` (private) or `D…` (direct), letters and digits.
fn slack_channel_id(value: &str) -> Result<(), String> {
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

/// Replaces `slot` with the variable `var`'s value when it is set and passes `check`.
fn override_from_env(
    r: &mut Reader,
    env: &dyn Env,
    (var, key): (&str, &str),
    check: values::Check,
    slot: &mut Option<String>,
) {
    let Some(value) = non_empty(env, var) else {
        return;
    };
    match check(&value) {
        Ok(()) => *slot = Some(value),
        Err(message) => r.report(None, key, format!("from {var}: {message}")),
    }
}

/// What a listed Slack channel lacks, each naming the setting or variable to set.
pub(crate) fn slack_missing(slack: &SlackConfig) -> Vec<String> {
    let mut missing = Vec::new();
    if slack.channel.is_none() {
        missing.push(format!("`slack.channel` (or {})", SlackConfig::CHANNEL_ENV));
    }
    if slack.bot_token.is_none() {
        missing.push(format!("the bot token (set {})", slack.bot_token_env));
    }
    if slack.app_token.is_none() {
        missing.push(format!(
            "the app-level token for Socket Mode (set {})",
            slack.app_token_env
        ));
    }
    missing
}

/// What a listed Telegram channel lacks, each naming the setting or variable to set.
pub(crate) fn telegram_missing(telegram: &TelegramConfig) -> Vec<String> {
    let mut missing = Vec::new();
    if telegram.chat_id.is_none() {
        missing.push(format!(
            "`telegram.chat_id` (or {})",
            TelegramConfig::CHAT_ID_ENV
        ));
    }
    if telegram.bot_token.is_none() {
        missing.push(format!("the bot token (set {})", telegram.bot_token_env));
    }
    missing
}
