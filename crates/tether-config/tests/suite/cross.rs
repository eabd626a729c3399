//! Rules across tables: independent judge, complete Zulip settings, executor command, timeout.

use tether_config::MapEnv;

use super::{config, config_with, problem, problems, problems_with, warnings_with};

const MODEL: &str = "[model]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8080/v1\"\n\
                     model = \"qwen3-coder\"\n";

fn judge(base_url: &str, model: &str, extra: &str) -> String {
    format!(
        "[judge]\napi = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"{model}\"\n{extra}"
    )
}

#[test]
fn a_judge_on_the_executors_model_is_a_problem() {
    let text = format!(
        "{MODEL}{}",
        judge("http://127.0.0.1:8080/v1", "qwen3-coder", "")
    );
    assert_eq!(
        problem(&text),
        "tether.toml:5: judge: the judge is the executor's own model (openai-chat qwen3-coder \
         at http://127.0.0.1:8080/v1), but the judge must be independent; set \
         `judge.same_model = true` or pick another model"
    );
}

#[test]
fn the_same_model_check_ignores_trailing_slash_and_case_of_the_host() {
    let text = format!(
        "{MODEL}{}",
        judge("HTTP://127.0.0.1:8080/v1/", "qwen3-coder", "")
    );
    assert!(problem(&text).contains("judge.same_model = true"));
}

#[test]
fn same_model_true_allows_the_executors_model() {
    let text = format!(
        "{MODEL}{}",
        judge(
            "http://127.0.0.1:8080/v1",
            "qwen3-coder",
            "same_model = true\n"
        )
    );
    assert!(config(&text).judge.unwrap().same_model);
}

#[test]
fn a_different_model_or_endpoint_is_independent() {
    config(&format!(
        "{MODEL}{}",
        judge("http://127.0.0.1:8080/v1", "other", "")
    ));
    config(&format!(
        "{MODEL}{}",
        judge("http://127.0.0.1:9090/v1", "qwen3-coder", "")
    ));
    let other_api = judge("http://127.0.0.1:8080/v1", "qwen3-coder", "")
        .replace("openai-chat", "openai-responses");
    config(&format!("{MODEL}{other_api}"));
}

#[test]
fn an_external_executor_does_not_run_on_the_model_table() {
    let text = format!(
        "{MODEL}{}[executor]\nkind = \"command\"\ncommand = [\"my-agent\"]\n",
        judge("http://127.0.0.1:8080/v1", "qwen3-coder", "")
    );
    config(&text);
}

const ZULIP_CHANNEL: &str = "[human]\nchannels = [\"cli\", \"zulip\"]\n";

/// A warning, not an error: the run goes on without Zulip and `ask_human` names what is missing.
#[test]
fn a_zulip_channel_without_settings_names_each_missing_value_and_variable() {
    assert_eq!(
        warnings_with(ZULIP_CHANNEL, &MapEnv::new()),
        [
            "tether.toml:2: human.channels: \"zulip\" is a channel but its settings are missing: \
          `zulip.server_url` (or ZULIP_SERVER_URL), `zulip.bot_email` (or ZULIP_BOT_EMAIL), \
          `zulip.stream` (or ZULIP_STREAM), the bot's API key (set ZULIP_BOT_API_KEY)"
        ]
    );
}

#[test]
fn a_zulip_channel_names_only_what_is_missing() {
    let text = format!("{ZULIP_CHANNEL}[zulip]\nstream = \"s\"\napi_key_env = \"ZK\"\n");
    let env = MapEnv::new().with("ZULIP_BOT_EMAIL", "bot@z.example.com");
    assert_eq!(
        warnings_with(&text, &env),
        [
            "tether.toml:2: human.channels: \"zulip\" is a channel but its settings are missing: \
          `zulip.server_url` (or ZULIP_SERVER_URL), the bot's API key (set ZK)"
        ]
    );
}

#[test]
fn a_zulip_channel_configured_by_the_environment_is_complete() {
    let env = MapEnv::new()
        .with("ZULIP_SERVER_URL", "https://z.example.com")
        .with("ZULIP_BOT_EMAIL", "bot@z.example.com")
        .with("ZULIP_STREAM", "repo")
        .with("ZULIP_BOT_API_KEY", "k");
    let config = config_with(ZULIP_CHANNEL, &env);
    assert_eq!(
        config.zulip.server_url.as_deref(),
        Some("https://z.example.com")
    );
    assert!(warnings_with(ZULIP_CHANNEL, &env).is_empty());
}

#[test]
fn an_invalid_zulip_value_is_not_also_reported_missing() {
    let text = format!(
        "{ZULIP_CHANNEL}[zulip]\nserver_url = \"nope\"\nbot_email = \"b@z.example.com\"\n\
         stream = \"s\"\n"
    );
    let env = MapEnv::new().with("ZULIP_BOT_API_KEY", "k");
    let all = problems_with(&text, &env);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].starts_with("tether.toml:4: zulip.server_url: must be an http://"));
}

#[test]
fn zulip_settings_are_not_required_without_the_channel() {
    config("[zulip]\nstream = \"s\"\n");
}

#[test]
fn on_timeout_without_timeout_secs_is_a_problem() {
    assert_eq!(
        problem("[human]\non_timeout = \"carry on\"\n"),
        "tether.toml:2: human.on_timeout: has no effect without `human.timeout_secs` \
         (absent = wait forever); set timeout_secs or remove on_timeout"
    );
}

#[test]
fn kind_command_needs_a_command() {
    assert_eq!(
        problem("[executor]\nkind = \"command\"\n"),
        "tether.toml:1: executor.command: missing; kind = \"command\" needs the program and its \
         arguments, e.g. command = [\"my-agent\", \"--print\"]"
    );
    assert_eq!(
        problem("[executor]\nkind = \"command\"\ncommand = []\n"),
        "tether.toml:3: executor.command: must not be empty: it names the program and its arguments"
    );
    assert_eq!(
        problem("[executor]\nkind = \"command\"\ncommand = [\" \", \"x\"]\n"),
        "tether.toml:3: executor.command: item 1: the program must not be empty"
    );
}

#[test]
fn a_command_for_another_kind_is_a_problem() {
    let codex = problems("[executor]\nkind = \"codex\"\ncommand = [\"x\"]\n");
    assert_eq!(codex.len(), 1, "{codex:#?}");
    assert_eq!(
        codex[0],
        "tether.toml:3: executor.command: only used when kind = \"command\", but kind is \
         \"codex\"; remove it or set kind = \"command\""
    );
    assert_eq!(
        problem("[executor]\ncommand = [\"x\"]\n"),
        "tether.toml:2: executor.command: only used when kind = \"command\", but kind is \
         \"builtin\"; remove it or set kind = \"command\""
    );
}

#[test]
fn an_invalid_kind_does_not_add_command_problems() {
    assert!(problem("[executor]\nkind = \"bogus\"\ncommand = [\"x\"]\n").contains("executor.kind"));
}

#[test]
fn slack_and_telegram_channels_without_settings_name_each_missing_value_and_variable() {
    let text = "[human]\nchannels = [\"slack\", \"telegram\"]\n";
    assert_eq!(
        warnings_with(text, &MapEnv::new()),
        [
            "tether.toml:2: human.channels: \"slack\" is a channel but its settings are missing: \
             `slack.channel` (or SLACK_CHANNEL), the bot token (set SLACK_BOT_TOKEN), the \
             app-level token for Socket Mode (set SLACK_APP_TOKEN)",
            "tether.toml:2: human.channels: \"telegram\" is a channel but its settings are \
             missing: `telegram.chat_id` (or TELEGRAM_CHAT_ID), the bot token (set \
             TELEGRAM_BOT_TOKEN)"
        ]
    );
}

#[test]
fn a_telegram_chat_id_must_be_a_number_or_a_name() {
    let problems = super::problems("[telegram]\nchat_id = \"my chat\"\n");
    assert!(
        problems[0].contains("telegram.chat_id: must be a chat id"),
        "{problems:?}"
    );
}

#[test]
fn a_slack_channel_must_be_its_id_not_its_name() {
    let problems = super::problems("[slack]\nchannel = \"#general\"\n");
    assert!(
        problems[0].contains("slack.channel: must be the channel's id"),
        "{problems:?}"
    );
}
