//! Snapshots of what a model reads: the tool specs, and representative outputs.

use insta::{assert_json_snapshot, assert_snapshot};
use serde_json::json;
use tether_tools::{ToolOptions, ToolSet};

use super::Fixture;

#[test]
fn builtin_specs() {
    let dir = tempfile::tempdir().unwrap();
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default()).unwrap();
    assert_json_snapshot!(tools.specs());
}

#[test]
fn read_only_specs_are_the_builtin_ones() {
    let dir = tempfile::tempdir().unwrap();
    let all = ToolSet::builtin(dir.path(), &ToolOptions::default())
        .unwrap()
        .specs();
    let judge = ToolSet::read_only(dir.path()).unwrap().specs();
    let expected: Vec<_> = all
        .into_iter()
        .filter(|s| ["read", "grep", "ls"].contains(&s.name.as_str()))
        .collect();
    assert_eq!(judge, expected);
}

#[tokio::test]
async fn representative_outputs() {
    let fx = Fixture::with_options(&ToolOptions {
        bash_output_cap: 64,
        ..ToolOptions::default()
    });
    let source: String = (1..=30)
        .map(|i| format!("fn f{i}() {{ todo!() }}\n"))
        .collect();
    fx.file("src/lib.rs", &source)
        .file("src/util/mod.rs", "// todo!() later\n")
        .file("README.md", "# demo\n");

    let read = fx
        .ok(
            "read",
            json!({"path": "src/lib.rs", "offset": 28, "limit": 2}),
        )
        .await;
    let grep = fx
        .ok("grep", json!({"pattern": "todo!", "max_results": 4}))
        .await;
    let ls = fx.ok("ls", json!({"depth": 2})).await;
    let edit = fx
        .err(
            "edit",
            json!({"path": "src/lib.rs", "old_text": "todo!()", "new_text": "1"}),
        )
        .await;
    let bash = fx
        .err(
            "bash",
            json!({"command": "seq 1 40; echo done >&2; exit 1"}),
        )
        .await;
    let unknown = fx.err("rm", json!({})).await;
    assert_snapshot!(format!(
        "--- read\n{read}\n--- grep\n{grep}\n--- ls\n{ls}\n--- edit\n{edit}\n--- bash\n{bash}\n--- unknown\n{unknown}"
    ));
}
