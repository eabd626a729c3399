//! `executor.on_usage_limit` and `executor.max_usage_wait_secs`: what the loop does when the
//! agent hits a usage or rate limit, for every executor kind.

use tether_config::{ExecutorConfig, OnUsageLimit};

use super::{config, problem};

#[test]
fn the_loop_waits_a_day_at_most_by_default() {
    let config = config("");
    assert_eq!(config.executor.on_usage_limit, OnUsageLimit::Wait);
    assert_eq!(config.executor.max_usage_wait_secs, 86_400);
    assert_eq!(ExecutorConfig::DEFAULT_MAX_USAGE_WAIT_SECS, 86_400);
    assert_eq!(config.executor.usage_backoff_secs, 60);
}

#[test]
fn stop_and_a_max_wait_are_read_for_any_kind() {
    let config = config(
        "[executor]\nkind = \"command\"\ncommand = [\"agent\"]\non_usage_limit = \"stop\"\n\
         max_usage_wait_secs = 3600\nusage_backoff_secs = 5\n",
    );
    assert_eq!(config.executor.on_usage_limit, OnUsageLimit::Stop);
    assert_eq!(config.executor.max_usage_wait_secs, 3600);
    assert_eq!(config.executor.usage_backoff_secs, 5);
}

#[test]
fn bad_values_name_the_key_and_what_is_allowed() {
    assert_eq!(
        problem("[executor]\non_usage_limit = \"retry\"\n"),
        "tether.toml:2: executor.on_usage_limit: must be one of wait | stop, got \"retry\""
    );
    assert_eq!(
        problem("[executor]\nmax_usage_wait_secs = 10\n"),
        "tether.toml:2: executor.max_usage_wait_secs: must be between 60 and 2592000, got 10"
    );
    assert_eq!(
        problem("[executor]\nusage_backoff_secs = 0\n"),
        "tether.toml:2: executor.usage_backoff_secs: must be between 1 and 3600, got 0"
    );
}
