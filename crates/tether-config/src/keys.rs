//! The schema's key names, in the order the template and the README document them.
//!
//! One list serves the unknown-key check, the "did you mean" suggestions, the hint that a key
//! belongs in another table, and the test that the template documents every key.

/// Keys allowed at the top level: `plan` and the tables.
pub(crate) const TOP_LEVEL: &[&str] = &[
    "plan",
    "model",
    "planning",
    "judge",
    "loop_judge",
    "loop",
    "human",
    "zulip",
    "slack",
    "telegram",
    "notify",
    "ntfy",
    "webhook",
    "email",
    "notify_command",
    "executor",
    "server",
    "store",
    "sandbox",
    "run",
];

/// Keys of `[model]`.
pub(crate) const MODEL: &[&str] = &["api", "base_url", "model", "api_key_env", "price_per_mtok"];

/// Keys of `[planning]`: `[model]`'s, each optional.
pub(crate) const PLANNING: &[&str] = &["api", "base_url", "model", "api_key_env", "price_per_mtok"];

/// Keys of `[judge]`.
pub(crate) const JUDGE: &[&str] = &[
    "api",
    "base_url",
    "model",
    "api_key_env",
    "price_per_mtok",
    "same_model",
    "timeout_secs",
];

/// Keys of `[loop_judge]`.
pub(crate) const LOOP_JUDGE: &[&str] = &[
    "api",
    "base_url",
    "model",
    "api_key_env",
    "price_per_mtok",
    "timeout_secs",
];

/// Keys of `[loop]`.
pub(crate) const LOOP: &[&str] = &[
    "max_iterations",
    "max_tokens",
    "max_cost_usd",
    "max_duration",
    "escalate_after_rejects",
    "spin_guard",
    "oscillation_repeats",
    "reminder_after",
    "clean_end_reminders",
    "verify_timeout_secs",
    "max_consecutive_failures",
];

/// Keys of `[human]`.
pub(crate) const HUMAN: &[&str] = &[
    "name",
    "threshold",
    "channels",
    "timeout_secs",
    "on_timeout",
    "ask_before",
    "remind_after",
    "escalate_after",
    "escalate_to",
];

/// Keys of `[zulip]`.
pub(crate) const ZULIP: &[&str] = &["server_url", "bot_email", "stream", "api_key_env", "notify"];

/// Keys of `[slack]`.
pub(crate) const SLACK: &[&str] = &[
    "channel",
    "bot_token_env",
    "app_token_env",
    "api_url",
    "notify",
];

/// Keys of `[telegram]`.
pub(crate) const TELEGRAM: &[&str] = &["chat_id", "bot_token_env", "api_url", "notify"];

/// Keys of `[notify]`: what a run tells its channels unprompted.
pub(crate) const NOTIFY: &[&str] = &["on", "desktop", "rejected_after"];

/// Keys of `[ntfy]`.
pub(crate) const NTFY: &[&str] = &[
    "server",
    "topic",
    "topic_env",
    "reply_topic",
    "token_env",
    "reply_token_env",
    "priority",
    "notify",
];

/// Keys of `[webhook]`.
pub(crate) const WEBHOOK: &[&str] = &["url_env", "url", "format", "notify"];

/// Keys of `[email]`.
pub(crate) const EMAIL: &[&str] = &[
    "smtp_host",
    "smtp_port",
    "from",
    "to",
    "username_env",
    "password_env",
    "tls",
    "notify",
];

/// Keys of `[notify_command]`.
pub(crate) const NOTIFY_COMMAND: &[&str] = &["program", "args", "timeout_secs", "notify"];

/// Keys of `[executor]`.
pub(crate) const EXECUTOR: &[&str] = &[
    "kind",
    "command",
    "program",
    "args",
    "env",
    "turn_timeout_secs",
    "permissions",
    "on_usage_limit",
    "max_usage_wait_secs",
    "usage_backoff_secs",
];

/// Keys of `[server]`: where the dashboard listens.
pub(crate) const SERVER: &[&str] = &["listen"];
pub(crate) const STORE: &[&str] = &["url"];

/// Keys of `[sandbox]`.
pub(crate) const SANDBOX: &[&str] = &["mode", "network", "writable", "readable", "env"];

/// Keys of `[run]`.
pub(crate) const RUN: &[&str] = &["worktree", "commit_hooks"];

/// Every table with its keys.
pub(crate) const TABLES: &[(&str, &[&str])] = &[
    ("model", MODEL),
    ("planning", PLANNING),
    ("judge", JUDGE),
    ("loop_judge", LOOP_JUDGE),
    ("loop", LOOP),
    ("human", HUMAN),
    ("zulip", ZULIP),
    ("slack", SLACK),
    ("telegram", TELEGRAM),
    ("notify", NOTIFY),
    ("ntfy", NTFY),
    ("webhook", WEBHOOK),
    ("email", EMAIL),
    ("notify_command", NOTIFY_COMMAND),
    ("executor", EXECUTOR),
    ("server", SERVER),
    ("store", STORE),
    ("sandbox", SANDBOX),
    ("run", RUN),
];

/// Every setting of the schema as `(table, key)`, the top level's (`plan`) with an empty
/// table, in the template's order: the one list of what tether.toml can say.
pub fn settings() -> impl Iterator<Item = (&'static str, &'static str)> {
    let top = TOP_LEVEL
        .iter()
        .filter(|key| !TABLES.iter().any(|(table, _)| table == *key))
        .map(|key| ("", *key));
    let tables = TABLES
        .iter()
        .flat_map(|(table, keys)| keys.iter().map(move |key| (*table, *key)));
    top.chain(tables)
}

/// The tables (other than `current`) that have a key spelled exactly `key`.
pub(crate) fn tables_with(key: &str, current: &str) -> Vec<&'static str> {
    TABLES
        .iter()
        .filter(|(table, keys)| *table != current && keys.contains(&key))
        .map(|(table, _)| *table)
        .collect()
}

/// Whether a key looks like an attempt to put a credential in the file (`api_key`, `token`, …).
pub(crate) fn is_secret_like(key: &str) -> bool {
    let squashed: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    matches!(
        squashed.as_str(),
        "apikey" | "key" | "token" | "apitoken" | "secret" | "password" | "botapikey"
    )
}
