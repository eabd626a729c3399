//! Every problem is collected and listed, in file order.

use std::path::Path;

use tether_config::{ConfigError, MapEnv, parse};

use super::test_table::schema;

const MESSY: &str = r#"plan = ""

[model]
api = "openai-chta"
base_url = "http://127.0.0.1:8080/v1"
model = "qwen3-coder"
api_key = "sk-do-not-print"

[loop]
max_iteratons = 50
spin_guard = 0
verify_timeout_secs = "ten minutes"

[humna]
threshold = 3

[human]
threshold = 9
channels = ["terminal", "pager", "terminal"]
on_timeout = "go on"

[executor]
kind = "command"

[server]
listen = "localhost:8080"
"#;

#[test]
fn every_problem_is_listed() {
    let env = MapEnv::new().with("PAGER_ROOM", "not a room");
    let err = parse(&schema(), MESSY, Path::new("tether.toml"), &env).unwrap_err();
    let ConfigError::Invalid { file, problems } = &err else {
        panic!("expected Invalid, got {err:?}");
    };
    assert_eq!(file, Path::new("tether.toml"));
    let keys: Vec<&str> = problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "plan",
            "model.api",
            "model.api_key",
            "loop.max_iteratons",
            "loop.spin_guard",
            "loop.verify_timeout_secs",
            "humna",
            "human.threshold",
            "human.channels",
            "human.on_timeout",
            "executor.command",
            "server.listen",
            "pager.room",
        ]
    );
    let lines: Vec<Option<usize>> = problems.iter().map(|p| p.line).collect();
    assert_eq!(
        lines,
        [1, 4, 7, 10, 11, 12, 14, 18, 19, 20, 22, 26]
            .map(Some)
            .into_iter()
            .chain([None])
            .collect::<Vec<_>>()
    );
    assert!(!err.to_string().contains("sk-do-not-print"));
    insta::assert_snapshot!(err.to_string());
}

#[test]
fn the_display_lists_one_problem_per_line_after_a_count() {
    let err = parse(
        &schema(),
        "[loop]\nspin_guard = 0\nreminder_after = 0\n",
        Path::new("t.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.toml has 2 problems:\n\
         t.toml:2: loop.spin_guard: must be between 1 and 100, got 0\n\
         t.toml:3: loop.reminder_after: must be between 1 and 100, got 0"
    );
    let one = parse(
        &schema(),
        "[loop]\nspin_guard = 0\n",
        Path::new("t.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    assert_eq!(
        one.to_string(),
        "t.toml has 1 problem:\nt.toml:2: loop.spin_guard: must be between 1 and 100, got 0"
    );
}

#[test]
fn the_bare_problem_list_is_available() {
    let problems = tether_config::check(
        &schema(),
        "[loop]\nspin_guard = 0\n[x]\n",
        Path::new("t.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    assert_eq!(problems.len(), 2);
    assert_eq!(problems[1].line, Some(3));
    assert_eq!(problems[1].column, None);
}
