//! An independent client: the official Python MCP SDK (`mcp>=2,<3`) drives `tether mcp`
//! through `tests/suite/mcp_python_client.py`. A missing python3 or package fails the test (install
//! with `pip install "mcp>=2,<3"`); it is never skipped.

use std::path::Path;
use std::process::Command;

use crate::common::isolate;

/// Python, with tether's own variables cleared from its environment (the client passes it on to
/// the `tether mcp` it starts).
fn python() -> Command {
    let mut c = Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned()));
    isolate(&mut c);
    c
}

#[test]
fn the_python_sdk_lists_calls_cancels_and_follows_up() {
    let version = python()
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("python3 is needed for this test: {e}"));
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    assert!(
        version.starts_with("2."),
        "the Python package `mcp` 2.x is needed (pip install \"mcp>=2,<3\"); found {version:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/mcp_python_client.py");
    let out = python()
        .arg(&script)
        .args([env!("CARGO_BIN_EXE_tether"), dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for step in [
        "list_tools: ok",
        "answered via tether answer: ok",
        "cancelled: ok, still pending",
        "follow-up in the same thread: ok",
        "plan_status: ok",
    ] {
        assert!(stdout.contains(step), "missing {step:?} in:\n{stdout}");
    }
}
