#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde::Deserialize;
use serde_json::json;

use super::{check, parse};
use crate::spec::ToolSpec;

fn spec() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: String::new(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "flag": {"type": ["boolean", "null"]},
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
    }
}

fn err(args: serde_json::Value) -> String {
    check(&spec(), &args).unwrap_err()
}

#[test]
fn well_formed_arguments_pass() {
    check(
        &spec(),
        &json!({"path": "a", "offset": 3, "mode": "b", "flag": null}),
    )
    .unwrap();
    check(&spec(), &json!({"path": "a", "offset": null})).unwrap();
}

#[test]
fn each_problem_names_the_field() {
    assert_eq!(
        err(json!({})),
        "invalid arguments for `read`: missing field `path`"
    );
    assert_eq!(
        err(json!({"path": null})),
        "invalid arguments for `read`: missing field `path`"
    );
    assert_eq!(
        err(json!({"path": "a", "offset": "10"})),
        "invalid arguments for `read`: field `offset` must be an integer, got a string (\"10\")"
    );
    assert_eq!(
        err(json!({"path": "a", "offset": 1.5})),
        "invalid arguments for `read`: field `offset` must be an integer, got a number (1.5)"
    );
    assert_eq!(
        err(json!({"path": "a", "offset": 0})),
        "invalid arguments for `read`: field `offset` must be at least 1, got 0"
    );
    assert_eq!(
        err(json!({"path": "a", "mode": "c"})),
        "invalid arguments for `read`: field `mode` must be one of \"a\", \"b\", got \"c\""
    );
    assert_eq!(
        err(json!({"path": "a", "file": "b"})),
        "invalid arguments for `read`: unknown field `file`; `read` takes: flag, mode, offset, path"
    );
    assert_eq!(
        err(json!({"path": 5})),
        "invalid arguments for `read`: field `path` must be a string, got an integer (5)"
    );
}

#[test]
fn non_objects_are_refused() {
    assert_eq!(
        err(json!("path")),
        "arguments for `read` must be a JSON object, got a string (\"path\")"
    );
    assert_eq!(
        err(json!([1])),
        "arguments for `read` must be a JSON object, got an array ([1])"
    );
}

#[test]
fn long_values_are_shortened_in_messages() {
    let long = "x".repeat(100);
    let msg = err(json!({"path": "a", "offset": long}));
    assert!(msg.ends_with("…)"), "{msg}");
    assert!(msg.len() < 150, "{msg}");
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    flag: bool,
}

#[test]
fn parse_drops_nulls_and_deserialises() {
    let args: Args = parse(&spec(), json!({"path": "a", "flag": null})).unwrap();
    assert_eq!((args.path.as_str(), args.flag), ("a", false));
    let out = parse::<Args>(&spec(), serde_json::Value::Null).unwrap_err();
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "invalid arguments for `read`: missing field `path`"
    );
}
