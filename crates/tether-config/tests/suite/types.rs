//! Wrong types, malformed values and syntax errors name the key, the line and what is allowed.

use super::{problem, problems};

const MODEL: &str = "[model]\napi = \"openai-chat\"\nbase_url = \"http://h\"\nmodel = \"m\"\n";

#[test]
fn wrong_types_name_key_line_and_expected_type() {
    let cases = [
        (
            "[loop]\n\nspin_guard = \"2\"\n",
            "tether.toml:3: loop.spin_guard: must be an integer between 1 and 100, got a string",
        ),
        (
            "[loop]\nmax_iterations = 2.5\n",
            "tether.toml:2: loop.max_iterations: must be an integer between 0 and 20000, got a float",
        ),
        (
            "plan = 3\n",
            "tether.toml:1: plan: must be a string, got an integer",
        ),
        (
            "plan = [\"a\"]\n",
            "tether.toml:1: plan: must be a string, got an array",
        ),
        (
            "[human]\nchannels = \"web\"\n",
            "tether.toml:2: human.channels: must be a list of names, got a string",
        ),
        (
            "[human]\nask_before = \"git push\"\n",
            "tether.toml:2: human.ask_before: must be a list of strings, got a string",
        ),
        (
            "[human]\nask_before = [\"git push\", 7]\n",
            "tether.toml:2: human.ask_before: item 2: must be a string, got an integer",
        ),
        (
            "[human]\ntimeout_secs = true\n",
            "tether.toml:2: human.timeout_secs: must be an integer between 1 and 2592000, got a boolean",
        ),
        (
            "model = \"gpt\"\n",
            "tether.toml:1: model: must be a table ([model]), got a string",
        ),
        (
            "[[loop]]\nspin_guard = 2\n",
            "tether.toml:1: loop: must be a table ([loop]), got an array",
        ),
        (
            "[executor]\nkind = 1\n",
            "tether.toml:2: executor.kind: must be one of builtin | claude | codex | pi | command | acp, got an integer",
        ),
        (
            "[server]\nlisten = 8080\n",
            "tether.toml:2: server.listen: must be a string, got an integer",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(problem(text), expected, "{text}");
    }
}

#[test]
fn a_bool_must_be_a_bool() {
    let text = format!(
        "{}same_model = \"yes\"\n",
        MODEL.replace("[model]", "[judge]")
    );
    assert_eq!(
        problem(&text),
        "tether.toml:5: judge.same_model: must be true or false, got a string"
    );
}

#[test]
fn choices_list_the_allowed_values_and_suggest_one() {
    assert_eq!(
        problem("[executor]\nkind = \"claud\"\n"),
        "tether.toml:2: executor.kind: must be one of builtin | claude | codex | pi | command | acp, \
         got \"claud\"; did you mean \"claude\"?"
    );
    assert_eq!(
        problem(&MODEL.replace("openai-chat", "openai")),
        "tether.toml:2: model.api: must be one of openai-chat | openai-responses | anthropic, \
         got \"openai\"; did you mean \"openai-chat\"?"
    );
    assert_eq!(
        problem("[human]\nchannels = [\"web\", \"discord\"]\n"),
        "tether.toml:2: human.channels: item 2: must be one of terminal | cli | web | pager, got \
         \"discord\""
    );
}

#[test]
fn duplicate_channels_are_rejected() {
    assert_eq!(
        problem("[human]\nchannels = [\"web\", \"cli\", \"web\"]\n"),
        "tether.toml:2: human.channels: \"web\" is listed twice"
    );
}

#[test]
fn a_model_table_needs_api_base_url_and_model() {
    let all = problems("\n[model]\napi_key_env = \"K\"\n");
    assert_eq!(
        all,
        [
            "tether.toml:2: model.api: missing; [model] needs `api`, `base_url`, `model`",
            "tether.toml:2: model.base_url: missing; [model] needs `api`, `base_url`, `model`",
            "tether.toml:2: model.model: missing; [model] needs `api`, `base_url`, `model`",
        ]
    );
}

#[test]
fn malformed_values_say_what_is_expected() {
    let cases = [
        (
            MODEL.replace("http://h", "ftp://h"),
            "tether.toml:3: model.base_url: must be an http:// or https:// URL such as https://chat.example.com; the scheme \"ftp\" is not http or https",
        ),
        (
            MODEL.replace("http://h", "https://"),
            "tether.toml:3: model.base_url: must be an http:// or https:// URL such as https://chat.example.com; the host is missing in \"https://\"",
        ),
        (
            MODEL.replace("model = \"m\"", "model = \" \""),
            "tether.toml:4: model.model: must not be empty",
        ),
        (
            "plan = \"\"\n".to_owned(),
            "tether.toml:1: plan: must not be empty",
        ),
        (
            "[pager]\nroom = \"\"\n".to_owned(),
            "tether.toml:2: pager.room: must be a room's name (a-z, 0-9, -), got \"\"",
        ),
        (
            "[pager]\nurl = \"pager.example\"\n".to_owned(),
            "tether.toml:2: pager.url: must be an http:// or https:// URL such as https://chat.example.com, got \"pager.example\"",
        ),
        (
            "[pager]\nlevel = 0\n".to_owned(),
            "tether.toml:2: pager.level: must be between 1 and 5, got 0",
        ),
        (
            "[server]\nlisten = \"localhost:80\"\n".to_owned(),
            "tether.toml:2: server.listen: must be an IP address and port such as 127.0.0.1:0 or [::1]:8080 (port 0 picks a free port), got \"localhost:80\"",
        ),
        (
            "[human]\nask_before = [\"git push\", \" \"]\n".to_owned(),
            "tether.toml:2: human.ask_before: item 2: must not be empty",
        ),
        (
            "[human]\ntimeout_secs = 5\non_timeout = \"\"\n".to_owned(),
            "tether.toml:3: human.on_timeout: must not be empty",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(problem(&text), expected, "{text}");
    }
}

#[test]
fn api_key_env_must_be_a_variable_name() {
    let text = format!("{MODEL}api_key_env = \"sk-live-123\"\n");
    let shown = problem(&text);
    assert!(
        shown.starts_with(
            "tether.toml:5: model.api_key_env: must be the NAME of an environment variable"
        ),
        "{shown}"
    );
    assert!(
        !shown.contains("sk-live-123"),
        "the value is echoed: {shown}"
    );
    let pager = problem("[pager]\ntoken_env = \"1KEY\"\n");
    assert!(
        pager.starts_with("tether.toml:2: pager.token_env: must be the NAME"),
        "{pager}"
    );
}

#[test]
fn syntax_errors_carry_line_and_column() {
    assert_eq!(
        problems("[loop]\nspin_guard = 2\nreminder_after = = 3\nx = \"\n"),
        [
            "tether.toml:3:18: syntax error: extra `=`, expected nothing",
            "tether.toml:3:20: syntax error: unexpected key or value, expected newline, `#`",
            "tether.toml:4:6: syntax error: invalid basic string, expected `\"`",
        ]
    );
    assert_eq!(
        problem("[loop\n"),
        "tether.toml:1:6: syntax error: unclosed table, expected `]`"
    );
}

#[test]
fn duplicate_keys_name_the_key_and_where_it_was_set_first() {
    assert_eq!(
        problem("[loop]\nspin_guard = 2\nspin_guard = 3\n"),
        "tether.toml:3:1: loop.spin_guard: duplicate key: already set on line 2; set it once"
    );
    assert_eq!(
        problem(
            "plan = \"a.md\"\n\n[loop]\nspin_guard = 2\n\n[human]\nthreshold = 5\n  threshold=6\n"
        ),
        "tether.toml:8:3: human.threshold: duplicate key: already set on line 7; set it once"
    );
    assert_eq!(
        problem("plan = \"a.md\"\nplan = \"b.md\"\n"),
        "tether.toml:2:1: plan: duplicate key: already set on line 1; set it once"
    );
    assert_eq!(
        problem("[loop]\nspin_guard = 2\n\n[loop]\n"),
        "tether.toml:4:2: loop: duplicate table: already opened on line 1; merge the two"
    );
}
