//! `[executor] kind = "claude"` when Claude Code cannot do its work: a missing program, and an
//! MCP server that did not connect (played by a stand-in script), each stopping the run at once
//! with an error naming the fix. No real CLI or model server is needed.

use std::fs;

use crate::common::{run, spawn, text, wait_output};

/// A workspace whose executor is Claude Code at `program` (no model server needed).
fn with_program(program: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let toml = format!("[executor]\nkind = \"claude\"\nprogram = {program:?}\n");
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    dir
}

#[test]
fn a_missing_claude_is_an_error_naming_the_fix() {
    let dir = with_program("/nonexistent/claude");
    let out = run(
        dir.path(),
        &[
            "ralph",
            "Hi.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    );
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("Claude Code does not run: `/nonexistent/claude --version` could not start")
            && all.contains("npm install -g @anthropic-ai/claude-code"),
        "{all}"
    );
}

#[test]
fn an_mcp_server_that_did_not_connect_stops_the_turn_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    // A stand-in for Claude Code whose tether MCP server failed, and that would then run on.
    let fake = dir.path().join("fake-claude");
    fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo '9.9.9 (Claude Code)'; exit 0; }\n\
         echo '{\"type\":\"system\",\"subtype\":\"init\",\"mcp_servers\":[{\"name\":\"tether\",\"status\":\"failed\"}]}'\n\
         exec sleep 600\n",
    )
    .unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let toml = format!(
        "[executor]\nkind = \"claude\"\nprogram = {:?}\n",
        fake.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let child = spawn(
        dir.path(),
        &[
            "ralph",
            "Hi.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    );
    let out = wait_output(child);
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("Claude Code could not start tether's MCP server (status \"failed\")"),
        "{all}"
    );
}
