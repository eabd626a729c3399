//! What the first model request of an iteration weighs, per agent CLI, measured with the real
//! CLIs against the scripted fake model server (which records every request): the bytes of its
//! JSON body, its characters / 4 (a rough token count), and the tools it declares.
//!
//! Each CLI is measured three ways: run directly (its own headless command, without tether's MCP
//! server: what the CLI costs on its own), as one iteration of a `tether ralph` run (what tether
//! sends it), and — Claude Code only — that iteration again with its tool search turned off
//! (`ENABLE_TOOL_SEARCH=false` in `[executor.env]`), which declares every tool up front. The
//! difference between the last two is what the tool search saves on every request.
//!
//! Generic over the agent CLI like the agent_cli bench (see [`kinds`]); a kind whose variable is
//! unset is skipped with a message. Figures are printed, never asserted.
//!
//! Run with `./test.sh` once (it installs the CLIs), then
//! `TETHER_TEST_CLAUDE=… TETHER_TEST_CODEX=… TETHER_TEST_PI=… cargo bench -p tether --bench
//! first_request`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;
// Its direct command lines with tether's MCP server are the agent_cli bench's.
#[allow(dead_code)]
#[path = "support/kinds.rs"]
mod kinds;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::{FakeModelServer, RecordedRequest};

use kinds::{KINDS, Kind, SetupFn};

const PROMPT: &str = "Say that you are done.";

fn main() {
    println!(
        "{:<8} {:<34} {:>9} {:>10} {:>6} {:>9}",
        "cli", "how", "bytes", "chars/4", "tools", "deferred"
    );
    for kind in &KINDS {
        let Some(program) = std::env::var_os(kind.var).map(PathBuf::from) else {
            println!(
                "{}: skipped ({} is not set; ./test.sh installs the CLIs)",
                kind.name, kind.var
            );
            continue;
        };
        let Some(setup) = kind.setup else {
            println!("{}: skipped (no setup for it yet)", kind.name);
            continue;
        };
        let program = std::fs::canonicalize(&program).unwrap();
        let program = program.to_str().unwrap();
        row(kind, "run directly", &direct(program, setup));
        row(
            kind,
            "one iteration of tether ralph",
            &under_tether(kind, program, setup, ""),
        );
        if kind.name == "claude" {
            let off = under_tether(kind, program, setup, "ENABLE_TOOL_SEARCH = \"false\"\n");
            row(kind, "  the same, tool search off", &off);
        }
    }
}

/// Prints one measured request.
fn row(kind: &Kind, how: &str, request: &RecordedRequest) {
    let tools = request.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let deferred = tools
        .iter()
        .filter(|t| t["defer_loading"].as_bool() == Some(true))
        .count();
    println!(
        "{:<8} {:<34} {:>9} {:>10} {:>6} {:>9}",
        kind.name,
        how,
        request.raw_body.len(),
        request.raw_body.chars().count() / 4,
        tools.len(),
        deferred
    );
    let names: Vec<&str> = tools.iter().map(tool_name).collect();
    println!("{:<8}   tools: {}", "", names.join(", "));
}

/// A tool's name in any of the three wire formats (a Codex namespace by its own name).
fn tool_name(tool: &Value) -> &str {
    tool["name"]
        .as_str()
        .or(tool["function"]["name"].as_str())
        .or(tool["type"].as_str())
        .unwrap_or("?")
}

/// A fake model server answering every request at once.
fn server() -> (tokio::runtime::Runtime, FakeModelServer) {
    let rt = common::runtime();
    let script = Script::from_fn(|_: &Request| Turn::text("Done."));
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    (rt, server)
}

/// The first model request the server received (a model listing is not one).
fn first_request(server: &FakeModelServer) -> RecordedRequest {
    server
        .requests()
        .into_iter()
        .find(|r| r.path != "/v1/models")
        .expect("the CLI sent no model request")
}

/// The CLI run directly with the prompt on stdin.
fn direct(program: &str, setup: SetupFn) -> RecordedRequest {
    let (_rt, server) = server();
    let dir = tempfile::tempdir().unwrap();
    let setup = setup(dir.path(), program, &server);
    let mut child = Command::new(&setup.direct[0])
        .args(&setup.direct[1..])
        .envs(setup.env.iter().map(|(k, v)| (k, v)))
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(PROMPT.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "{:?} failed", setup.direct);
    first_request(&server)
}

/// One iteration of `tether ralph` running the CLI, with `env` (TOML lines) added to its
/// `[executor.env]`.
fn under_tether(kind: &Kind, program: &str, setup: SetupFn, env: &str) -> RecordedRequest {
    let (_rt, server) = server();
    let dir = tempfile::tempdir().unwrap();
    let setup = setup(dir.path(), program, &server);
    let own: String = setup
        .env
        .iter()
        .filter(|(k, _)| !setup.own_env.contains(&k.as_str()))
        .map(|(k, v)| format!("{k} = {v:?}\n"))
        .collect();
    write_config(
        dir.path(),
        kind,
        program,
        &setup.args,
        &format!("{own}{env}"),
    );
    let out = common::run(dir.path(), &["ralph", PROMPT, "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", common::text(&out.stderr));
    first_request(&server)
}

/// Writes `dir`'s tether.toml: `kind` run as `program` with `args`, and `env` (TOML lines).
fn write_config(dir: &Path, kind: &Kind, program: &str, args: &[String], env: &str) {
    let toml = format!(
        "[executor]\nkind = \"{}\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         args = {args:?}\n[executor.env]\n{env}",
        kind.name,
    );
    std::fs::write(dir.join("tether.toml"), toml).unwrap();
}
