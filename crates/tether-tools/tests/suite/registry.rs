//! `ToolSet`: unknown tools and malformed arguments become errors for the model, the judge's
//! set is read-only, and tools from elsewhere can join.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tether_tools::{
    FatalToolError, SetupError, Tool, ToolContext, ToolOutput, ToolSet, ToolSpec, TypedTool,
};

use super::Fixture;

#[tokio::test]
async fn an_unknown_tool_is_an_error_listing_the_available_ones() {
    let fx = Fixture::new();
    let out = fx.call("writ", json!({"path": "a"})).await;
    assert!(out.output.is_error);
    assert_eq!(
        out.output.content,
        "unknown tool `writ`; available: read, write, edit, bash, grep, ls. Did you mean `write`?"
    );
    assert_eq!(
        out.summary,
        "writ (unknown tool) (error: unknown tool `writ`; available: read, write, edit, bash, gre…)"
    );
    let far = fx.call("deploy", json!({})).await.output.content;
    assert_eq!(
        far,
        "unknown tool `deploy`; available: read, write, edit, bash, grep, ls"
    );
}

#[tokio::test]
async fn malformed_arguments_are_errors_naming_the_problem() {
    let fx = Fixture::new();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "read",
            json!({}),
            "invalid arguments for `read`: missing field `path`",
        ),
        (
            "read",
            json!("src/lib.rs"),
            "arguments for `read` must be a JSON object, got a string (\"src/lib.rs\")",
        ),
        (
            "read",
            json!([]),
            "arguments for `read` must be a JSON object, got an array ([])",
        ),
        (
            "read",
            Value::Null,
            "invalid arguments for `read`: missing field `path`",
        ),
        (
            "read",
            json!({"path": 7}),
            "invalid arguments for `read`: field `path` must be a string, got an integer (7)",
        ),
        (
            "read",
            json!({"path": "a", "limit": "10"}),
            "invalid arguments for `read`: field `limit` must be an integer, got a string (\"10\")",
        ),
        (
            "read",
            json!({"file_path": "a"}),
            "invalid arguments for `read`: unknown field `file_path`; `read` takes: limit, offset, path",
        ),
        (
            "write",
            json!({"path": "a"}),
            "invalid arguments for `write`: missing field `content`",
        ),
        (
            "edit",
            json!({"path": "a", "old_text": "x", "new_text": "y", "replace_all": "yes"}),
            "invalid arguments for `edit`: field `replace_all` must be a boolean, got a string (\"yes\")",
        ),
        (
            "grep",
            json!({"pattern": "x", "max_results": -1}),
            "invalid arguments for `grep`: field `max_results` must be at least 1, got -1",
        ),
        (
            "ls",
            json!({"depth": 1.5}),
            "invalid arguments for `ls`: field `depth` must be an integer, got a number (1.5)",
        ),
    ];
    for (tool, args, expected) in cases {
        let out = fx.call(tool, args.clone()).await.output;
        assert!(out.is_error, "{tool} {args}");
        assert_eq!(out.content, expected, "{tool} {args}");
    }
    assert!(!fx.root.join("a").exists());
}

#[tokio::test]
async fn null_optional_fields_and_null_arguments_are_absent() {
    let fx = Fixture::new();
    fx.file("a.txt", "a\n");
    assert_eq!(
        fx.ok(
            "read",
            json!({"path": "a.txt", "offset": null, "limit": null})
        )
        .await,
        "     1\ta\n"
    );
    assert_eq!(fx.ok("ls", Value::Null).await, "a.txt\n");
}

#[tokio::test]
async fn the_read_only_set_has_read_grep_and_ls_only() {
    let fx = Fixture::new();
    let judge = ToolSet::read_only(&fx.root).unwrap();
    assert_eq!(judge.names(), ["read", "grep", "ls"]);
    let out = judge
        .call(
            "write",
            json!({"path": "a", "content": "x"}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(out.output.is_error);
    assert_eq!(
        out.output.content,
        "unknown tool `write`; available: read, grep, ls"
    );
    assert!(!fx.root.join("a").exists());
}

#[test]
fn a_missing_root_is_a_setup_error() {
    let err = ToolSet::read_only("/definitely/not/here").unwrap_err();
    assert!(matches!(err, SetupError::Root { .. }), "{err:?}");
}

/// A stand-in for tether's own tools (`ask_human`, `complete_goal`).
struct Echo {
    spec: ToolSpec,
    fatal: bool,
}

impl Echo {
    fn tool(name: &str, fatal: bool) -> Arc<dyn Tool> {
        let spec = ToolSpec {
            name: name.into(),
            description: "Echo `text`.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": false,
            }),
        };
        Arc::new(Self { spec, fatal })
    }
}

impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async move {
            if self.fatal {
                return Err(FatalToolError::new(&self.spec.name, "the store is gone"));
            }
            Ok(ToolOutput::ok(args["text"].as_str().unwrap_or_default()).with_note("echoed"))
        })
    }
}

#[tokio::test]
async fn extra_tools_join_the_set_with_their_schemas_checked() {
    let fx = Fixture::new();
    let mut tools = ToolSet::read_only(&fx.root)
        .unwrap()
        .with(Echo::tool("ask_human", false))
        .unwrap();
    assert_eq!(tools.names(), ["read", "grep", "ls", "ask_human"]);
    assert_eq!(tools.specs().len(), 4);
    let ctx = ToolContext::default();
    let out = tools
        .call("ask_human", json!({"text": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        (out.output.content.as_str(), out.summary.as_str()),
        ("hi", "ask_human (echoed)")
    );
    let bad = tools
        .call("ask_human", json!({"txt": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        bad.output.content,
        "invalid arguments for `ask_human`: unknown field `txt`; `ask_human` takes: text"
    );

    let dup = tools.add(Echo::tool("read", false)).unwrap_err();
    assert_eq!(dup.to_string(), "a tool named `read` is already in the set");

    tools.add(Echo::tool("complete_goal", true)).unwrap();
    let fatal = tools
        .call("complete_goal", json!({"text": "x"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        fatal.to_string(),
        "tool `complete_goal` failed: the store is gone"
    );
    assert_eq!(fatal.tool(), "complete_goal");
}

#[tokio::test]
async fn every_call_gets_a_one_line_summary() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", "fn a() {}\n");
    let cases = [
        ("read", json!({"path": "src/lib.rs"}), "read src/lib.rs"),
        (
            "write",
            json!({"path": "b.txt", "content": "abc"}),
            "write b.txt (3 bytes)",
        ),
        (
            "edit",
            json!({"path": "src/lib.rs", "old_text": "a()", "new_text": "b()"}),
            "edit src/lib.rs",
        ),
        (
            "edit",
            json!({"path": "nope.rs", "old_text": "a", "new_text": "b"}),
            "edit nope.rs (error: `nope.rs` does not exist)",
        ),
        (
            "grep",
            json!({"pattern": "fn", "path": "src"}),
            "grep `fn` in src (1 match)",
        ),
        ("ls", json!({"path": "src"}), "ls src"),
        (
            "read",
            json!({}),
            "read ? (error: invalid arguments for `read`: missing field `path`)",
        ),
    ];
    for (tool, args, expected) in cases {
        assert_eq!(fx.call(tool, args).await.summary, expected);
    }
    let bash = fx
        .call("bash", json!({"command": "echo one\necho two"}))
        .await
        .summary;
    assert!(bash.starts_with("bash: echo one … (exit 0, "), "{bash}");
}

#[tokio::test]
async fn a_withheld_tool_is_refused_without_being_offered() {
    let fx = Fixture::new();
    let tools = ToolSet::read_only(&fx.root)
        .unwrap()
        .withhold(
            "write",
            "read-only here",
            "`write` is not available: this set is read-only",
        )
        .unwrap();
    assert_eq!(tools.names(), ["read", "grep", "ls"]);
    let out = tools
        .call(
            "write",
            json!({"path": "a", "content": "b"}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(out.output.is_error);
    assert_eq!(
        out.output.content,
        "`write` is not available: this set is read-only"
    );
    assert_eq!(out.summary, "write: refused (read-only here)");
    assert!(!fx.root.join("a").exists());

    let taken = ToolSet::read_only(&fx.root)
        .unwrap()
        .withhold("read", "no", "no")
        .unwrap_err();
    assert_eq!(
        taken.to_string(),
        "a tool named `read` is already in the set"
    );
    let err = tools.with(Echo::tool("write", false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a tool named `write` is already in the set"
    );
}

/// A tool written as its logic over typed arguments.
struct Greet {
    spec: ToolSpec,
}

#[derive(serde::Deserialize)]
struct GreetArgs {
    name: String,
    times: Option<u32>,
}

impl TypedTool for Greet {
    type Args = GreetArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: GreetArgs, _ctx: &ToolContext) -> Result<ToolOutput, FatalToolError> {
        Ok(ToolOutput::ok(
            format!("hello {}", args.name).repeat(args.times.unwrap_or(1) as usize),
        ))
    }
}

#[tokio::test]
async fn a_typed_tool_gets_checked_and_parsed_arguments() {
    let greet = Greet {
        spec: ToolSpec::object(
            "greet",
            "Greet someone.",
            json!({"name": {"type": "string"}, "times": {"type": "integer", "minimum": 1}}),
            &["name"],
        ),
    };
    let ctx = ToolContext::default();
    // Called directly, not through a set: the blanket `Tool` implementation does the checking.
    let ok = Tool::call(&greet, json!({"name": "ada", "times": null}), &ctx)
        .await
        .unwrap();
    assert_eq!(ok, ToolOutput::ok("hello ada"));
    let bad = Tool::call(&greet, json!({"name": "ada", "times": 0}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        bad,
        ToolOutput::error("invalid arguments for `greet`: field `times` must be at least 1, got 0")
    );
    assert_eq!(Tool::describe_call(&greet, &json!({})), "greet");
}
