//! Rules across tables: independent judge, a listed channel's settings complete, executor
//! command, timeout.

use tether_config::MapEnv;

use super::test_table::PagerSettings;
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
         at http://127.0.0.1:8080/v1), but every judge must be independent; set \
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

const PAGER_CHANNEL: &str = "[human]\nchannels = [\"cli\", \"pager\"]\n";

/// A warning, not an error: the run goes on without the channel and `ask_human` names what is
/// missing, as the declared table's read function found it lacking.
#[test]
fn a_listed_declared_channel_without_settings_names_each_missing_value_and_variable() {
    assert_eq!(
        warnings_with(PAGER_CHANNEL, &MapEnv::new()),
        [
            "tether.toml:2: human.channels: \"pager\" is a channel but its settings are missing: \
             `pager.room` (or PAGER_ROOM), the token (set PAGER_TOKEN)"
        ]
    );
}

#[test]
fn a_declared_channel_configured_by_the_environment_is_complete() {
    let env = MapEnv::new()
        .with("PAGER_ROOM", "ops")
        .with("PAGER_TOKEN", "k");
    let config = config_with(PAGER_CHANNEL, &env);
    assert_eq!(PagerSettings::of(&config).room.as_deref(), Some("ops"));
    assert!(warnings_with(PAGER_CHANNEL, &env).is_empty());
}

#[test]
fn an_invalid_declared_value_is_not_also_reported_missing() {
    let text = format!("{PAGER_CHANNEL}[pager]\nroom = \"Ops\"\n");
    let env = MapEnv::new().with("PAGER_TOKEN", "k");
    let all = problems_with(&text, &env);
    assert_eq!(
        all,
        ["tether.toml:4: pager.room: must be a room's name (a-z, 0-9, -), got \"Ops\""]
    );
}

#[test]
fn a_declared_channels_settings_are_not_required_without_the_channel() {
    config("[pager]\nlevel = 3\n");
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
fn a_panel_is_read_in_order_with_how_it_agrees() {
    let panel = "agree = \"majority\"\n\
                 [[judge.panel]]\napi = \"anthropic\"\nbase_url = \"http://127.0.0.1:9\"\n\
                 model = \"second\"\napi_key_env = \"SECOND_KEY\"\ntimeout_secs = 30\n\
                 [[judge.panel]]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:10\"\n\
                 model = \"third\"\n";
    let read = config(&format!(
        "{MODEL}{}",
        judge("http://127.0.0.1:8080/v1", "first", panel)
    ))
    .judge
    .unwrap();
    assert_eq!(read.agree, tether_config::Agree::Majority);
    let names: Vec<&str> = read.judges().map(|j| j.endpoint.model.as_str()).collect();
    assert_eq!(names, ["first", "second", "third"]);
    assert_eq!(read.panel[0].timeout_secs, 30);
    assert_eq!(read.panel[1].timeout_secs, 600);
    let config = config(&format!(
        "{MODEL}{}",
        judge("http://127.0.0.1:8080/v1", "first", panel)
    ));
    assert!(
        config.key_vars().contains(&"SECOND_KEY".to_owned()),
        "a panel judge's key is tether's"
    );
    assert_eq!(
        config.key_setting("SECOND_KEY").unwrap(),
        "[judge.panel] api_key_env"
    );
}

#[test]
fn a_panel_entry_has_the_keys_of_a_judge_but_agree_and_panel() {
    let text = format!(
        "{MODEL}{}",
        judge(
            "http://127.0.0.1:8080/v1",
            "first",
            "[[judge.panel]]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9\"\n\
             model = \"second\"\nagree = \"all\"\n"
        )
    );
    let found = problem(&text);
    assert!(found.contains("judge.panel.agree: unknown key"), "{found}");
}

#[test]
fn agree_is_all_or_majority_and_a_panel_judge_is_independent_too() {
    let text = format!(
        "{MODEL}{}",
        judge("http://127.0.0.1:8080/v1", "first", "agree = \"most\"\n")
    );
    assert!(
        problem(&text).contains("judge.agree: must be one of all | majority"),
        "{}",
        problem(&text)
    );
    let text = format!(
        "{MODEL}{}",
        judge(
            "http://127.0.0.1:8080/v1",
            "first",
            "[[judge.panel]]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8080/v1\"\n\
             model = \"qwen3-coder\"\n"
        )
    );
    let found = problem(&text);
    assert!(
        found.contains("a judge of the panel is the executor's own model"),
        "{found}"
    );
    assert!(found.contains("`judge.panel.same_model = true`"), "{found}");
    assert_eq!(
        config(&format!(
            "{MODEL}{}",
            judge("http://127.0.0.1:8080/v1", "first", "")
        ))
        .judge
        .unwrap()
        .agree,
        tether_config::Agree::All,
        "all is the default"
    );
}
