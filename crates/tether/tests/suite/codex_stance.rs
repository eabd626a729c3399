//! `[executor] kind = "codex"`: what the agent may do unattended and when it cannot run — the
//! real Codex CLI (installed by ./test.sh) against the fake model server: its workspace-write
//! sandbox refuses a write outside the workspace, plan mode drafts in its read-only sandbox
//! writing the plan only through tether's tool, the turn timeout kills its whole process group,
//! and a missing CLI or an MCP server that cannot start stops the run with the fix.

use std::fs;
use std::path::Path;

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::wait_until;

use crate::common::agents::{diagnose, processes_in, ralph, start, status, tool_calls};
use crate::common::{PATIENCE, pending_question, run, text, wait_output};
use crate::suite::codex_cli::{Workspace, asks_until, codex};
use crate::suite::plan_cli::{EXISTING, drafted, results};

fn ralph_once(dir: &Path) -> std::process::Output {
    run(
        dir,
        &[
            "ralph",
            "Hi.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    )
}

#[test]
fn a_missing_codex_stops_the_run_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[executor]\nkind = \"codex\"\nprogram = \"/nonexistent/codex\"\n";
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let out = ralph_once(dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("Codex does not run: `/nonexistent/codex --version` could not start")
            && all.contains("npm install -g @openai/codex"),
        "{all}"
    );
}

#[test]
fn ask_before_is_named_as_not_enforced_for_codex() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[human]\nask_before = [\"git push\"]\n[executor]\nkind = \"codex\"\n\
                program = \"/nonexistent/codex\"\n";
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let out = ralph_once(dir.path());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("ask_before is not enforced for Codex: tether does not gate its commands")
            && stderr.contains("\"git push\""),
        "{stderr}"
    );
}

/// tether's MCP server not starting (played by the real Codex told, last, to start a program
/// that does not exist) is reported by Codex on stderr only; the run stops at once with the fix
/// instead of running the agent without tether's tools.
#[test]
fn an_mcp_server_that_cannot_start_stops_the_run_with_the_fix() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("Working without tools. <promise>DONE</promise>")
    }));
    let ws = Workspace::new(&server, "");
    let wrapper = ws.home.path().join("codex-broken-mcp");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec {:?} \"$@\" -c 'mcp_servers.tether.command=\"/nonexistent/tether\"'\n",
            codex().display().to_string()
        ),
    )
    .unwrap();
    fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let toml = fs::read_to_string(ws.path().join("tether.toml")).unwrap();
    let program = format!("program = {:?}", codex().display().to_string());
    let broken = format!("program = {:?}", wrapper.display().to_string());
    fs::write(
        ws.path().join("tether.toml"),
        toml.replace(&program, &broken),
    )
    .unwrap();
    let out = ralph_once(ws.path());
    assert_ne!(out.status.code(), Some(0), "{}", diagnose(ws.path(), &out));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("Codex could not start tether's MCP server")
            && all.contains("MCP server startup failed")
            && all.contains("tether doctor"),
        "{}",
        diagnose(ws.path(), &out)
    );
    assert_ne!(status(ws.path())["status"], "completed");
}

/// The stance the README documents: in Codex's workspace-write sandbox a command may write in
/// the workspace (and the temporary directory), but not elsewhere (here: a directory in
/// `/var/tmp`, outside both wherever the checkout is — a checkout under `/tmp` would put the
/// target directory inside the writable temporary directory), and nobody is asked — the command
/// fails and the model is told so.
#[test]
fn a_write_outside_the_workspace_is_refused_unattended() {
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let marker = outside.path().join("ran");
    let inside = "inside.txt";
    let command = format!("touch {inside} && touch {}", marker.display());
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("exec_command", json!({"cmd": command})),
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
        }
    }));
    let ws = Workspace::new(&server, "");
    let done = wait_output(ralph(ws.path(), "Run the probe."));
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(ws.path(), &done)
    );
    assert!(ws.path().join(inside).exists(), "the workspace is writable");
    assert!(
        !marker.exists(),
        "a write outside the workspace ran unattended"
    );
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(
        last.contains("Permission denied") || last.contains("Read-only"),
        "{last}"
    );
    // Codex 0.169 does not always report a unified-exec command that ends at once as an item
    // of its JSON stream (seen with the same binary on the same machine, run to run), so the
    // run records the call at most once; the stance itself is what is asserted above.
    let calls = tool_calls(ws.path());
    assert!(calls.len() <= 1, "{calls:?} {}", diagnose(ws.path(), &done));
}

/// Plan mode with Codex: it drafts read-only (a command writing a file fails) and
/// writes the plan only through tether's `write_plan`, served by `tether mcp --drafting`.
#[test]
fn codex_drafts_read_only_and_writes_the_plan_through_tether() {
    let plan = drafted();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| match results(req) {
        0 => Turn::tool(
            "exec_command",
            json!({"cmd": "mkdir -p src && touch src/evil.rs"}),
        ),
        1 => Turn::tool("mcp__tether__write_plan", json!({"content": plan.clone()})),
        _ => Turn::text("Drafted `verbose`."),
    }));
    let ws = Workspace::new(&server, "");
    fs::write(ws.path().join("greet.sh"), "echo \"Hello, $1!\"\n").unwrap();
    fs::write(ws.path().join("plan.md"), EXISTING).unwrap();
    let out = run(
        ws.path(),
        &[
            "plan",
            "new",
            "Add a --verbose flag to greet.sh",
            "--approve",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        fs::read_to_string(ws.path().join("plan.md")).unwrap(),
        drafted()
    );
    assert!(!ws.path().join("src/evil.rs").exists(), "{stderr}");
    // Refused by Codex's own read-only sandbox, or (inside tether's sandbox, where Codex's
    // cannot nest) by tether's read-only one.
    let second = server.requests()[1].raw_body.clone();
    assert!(
        second.contains("Read-only file system") || second.contains("Permission denied"),
        "{second}"
    );
    let first = server.requests()[0].raw_body.clone();
    assert!(first.contains("\"write_plan\""), "{first}");
    assert!(first.contains("write goals into the plan file with tether's"));
}

/// The turn timeout kills Codex's whole process group — Codex and the `tether mcp` it started,
/// still waiting on a question — and the iteration fails saying so.
#[test]
fn the_turn_timeout_kills_codex_and_its_mcp_server() {
    let (_rt, server) = start(asks_until("never answered"));
    let ws = Workspace::new(&server, "");
    let toml = fs::read_to_string(ws.path().join("tether.toml")).unwrap();
    let toml = toml.replace("turn_timeout_secs = 600", "turn_timeout_secs = 2");
    fs::write(ws.path().join("tether.toml"), toml).unwrap();
    let loop_ = crate::common::spawn(
        ws.path(),
        &[
            "ralph",
            "Ask and wait.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    );
    pending_question(ws.path());
    let done = wait_output(loop_);
    assert_ne!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(ws.path(), &done)
    );
    let failures: Vec<String> = crate::common::agents::events(ws.path())
        .into_iter()
        .filter_map(|e| match e {
            tether_store::Event::IterationFailed { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    assert!(
        failures
            .iter()
            .any(|f| f.contains("Codex ran longer than 2 s and was killed")),
        "{failures:?}"
    );
    wait_until("codex and its MCP server to be gone", PATIENCE, || {
        processes_in(ws.path()).is_empty().then_some(())
    })
    .unwrap();
}
