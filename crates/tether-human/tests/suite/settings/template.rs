//! The template `tether init` writes, with every channel's and sink's table as its declaration
//! writes it: it parses, its active values are the defaults, and its commented-out examples are
//! valid too.

use std::path::Path;

use tether_config::{Config, MapEnv, parse};
use tether_human::registry::schema;
use tether_zulip::ZulipConfig;

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
fn the_template_parses_to_the_defaults() {
    let schema = schema();
    let template = schema.template();
    let config = parse(&schema, &template, Path::new("tether.toml"), &MapEnv::new())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config, Config::defaults(&schema));
    for table in [
        "zulip",
        "slack",
        "telegram",
        "ntfy",
        "webhook",
        "email",
        "notify_command",
    ] {
        assert!(template.contains(&format!("\n[{table}]\n")), "[{table}]");
    }
}

#[test]
fn every_channels_commented_out_examples_are_valid() {
    let schema = schema();
    let text = uncomment(&schema.template());
    // The agent CLI settings are for another kind: the example command's kind is taken.
    let kept: String = text
        .lines()
        .filter(|l| {
            !["program", "args", "env", "turn_timeout_secs", "permissions"]
                .iter()
                .any(|k| l.starts_with(&format!("{k} = ")))
        })
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("kind = \"builtin\"", "kind = \"command\"");
    let config = parse(&schema, &kept, Path::new("tether.toml"), &MapEnv::new())
        .unwrap_or_else(|e| panic!("{e}\n{kept}"));
    assert_eq!(ZulipConfig::of(&config).stream.as_deref(), Some("my-repo"));
    assert_eq!(
        config
            .human
            .escalate_to
            .iter()
            .map(|t| t.spelling())
            .collect::<Vec<_>>(),
        ["ntfy:oncall", "email:lead@example.com"]
    );
}
