//! The core tables' key names, in the order the template documents them: the part of the schema
//! tether-config writes itself. Every other table is an integration's, declared with it
//! ([`crate::TableDecl`]); the [`crate::Schema`] its caller assembles (`assembled.rs`) puts the
//! two together.

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
    "agree",
    "panel",
];

/// Keys of each `[[judge.panel]]` entry: `[judge]`'s but `agree` and `panel`.
pub(crate) const JUDGE_PANEL: &[&str] = &[
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

/// Keys of `[side]`: `[model]`'s.
pub(crate) const SIDE: &[&str] = &["api", "base_url", "model", "api_key_env", "price_per_mtok"];

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
    "context",
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

/// Keys of `[notify]`: what a run tells its channels unprompted.
pub(crate) const NOTIFY: &[&str] = &["on", "desktop", "rejected_after"];

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

/// Keys of `[store]`.
pub(crate) const STORE: &[&str] = &["url"];

/// Keys of `[sandbox]`.
pub(crate) const SANDBOX: &[&str] = &["mode", "network", "writable", "readable", "env"];

/// Keys of `[schedule]`: how `tether schedule run` keeps schedules.
pub(crate) const SCHEDULE: &[&str] = &["pause_after_failures", "overdue_grace_secs", "poll_secs"];

/// Keys of `[run]`.
pub(crate) const RUN: &[&str] = &["worktree", "commit_hooks", "parallel", "merge_attempts"];

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
