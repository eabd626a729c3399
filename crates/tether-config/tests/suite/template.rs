//! The template `tether init` writes is valid and holds the defaults.

use std::path::Path;

use tether_config::{Config, MapEnv, parse};

use super::test_table::{PagerSettings, schema};

/// The template of the core tables and the test's `[pager]`.
fn template() -> String {
    schema().template()
}

#[test]
fn the_template_parses_with_no_problems_in_an_empty_environment() {
    if let Err(err) = parse(
        &schema(),
        &template(),
        Path::new("tether.toml"),
        &MapEnv::new(),
    ) {
        panic!("{err}");
    }
}

#[test]
fn the_templates_values_are_the_defaults() {
    let config = parse(
        &schema(),
        &template(),
        Path::new("tether.toml"),
        &MapEnv::new(),
    )
    .unwrap();
    assert_eq!(config, Config::defaults(&schema()));
}

/// Uncomments `# [table]` and `# key = value` lines, leaving descriptions alone.
fn uncomment(template: &str) -> String {
    template
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if is_setting(rest) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_setting(line: &str) -> bool {
    let is_header = line.starts_with('[')
        && line.ends_with(']')
        && line[1..line.len() - 1]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '_');
    let is_key = line.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    });
    is_header || is_key
}

#[test]
fn the_commented_out_examples_are_valid_too() {
    let text = uncomment(&template());
    assert!(
        text.contains("\n[model]\n") && text.contains("\n[judge]\n"),
        "{text}"
    );
    let err = parse(&schema(), &text, Path::new("tether.toml"), &MapEnv::new()).unwrap_err();
    // The only clashes: the example command is for kind = "command", the agent CLI settings for
    // kind = "claude", `permissions` for kind = "acp", and the kind is "builtin".
    let keys: Vec<&str> = err.problems().iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "executor.command",
            "executor.program",
            "executor.args",
            "executor.env",
            "executor.turn_timeout_secs",
            "executor.permissions"
        ],
        "{err}"
    );
    let without = |text: &str, keys: &[&str]| -> String {
        text.lines()
            .filter(|l| !keys.iter().any(|k| l.starts_with(&format!("{k} = "))))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let acp = without(&text, &["command"]).replace("kind = \"builtin\"", "kind = \"acp\"");
    let config = parse(&schema(), &acp, Path::new("tether.toml"), &MapEnv::new()).unwrap();
    assert_eq!(
        config.executor.permissions,
        tether_config::Permissions::AskBefore
    );
    let claude = without(&text, &["command", "permissions"])
        .replace("kind = \"builtin\"", "kind = \"claude\"");
    let config = parse(&schema(), &claude, Path::new("tether.toml"), &MapEnv::new()).unwrap();
    assert_eq!(config.executor.program.as_deref(), Some("claude"));
    assert_eq!(config.executor.turn_timeout_secs, Some(86400));
    assert_eq!(config.executor.max_usage_wait_secs, 86400);
    let text = without(
        &text,
        &["program", "args", "env", "turn_timeout_secs", "permissions"],
    )
    .replace("kind = \"builtin\"", "kind = \"command\"");
    let config = parse(&schema(), &text, Path::new("tether.toml"), &MapEnv::new()).unwrap();
    assert!(config.model.is_some() && config.judge.is_some());
    assert!(config.human.timeout.is_some());
    assert_eq!(PagerSettings::of(&config).room.as_deref(), Some("ops"));
    assert_eq!(config.executor.command, ["my-agent", "--print"]);
}
