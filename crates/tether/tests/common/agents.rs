//! What the tests of the real agent CLIs (Claude Code, Codex, pi) share: the CLI's path from
//! the variable ./test.sh sets (a test without it fails), a fake model server with its runtime,
//! a Ralph loop to start, the run's status, events, tool calls and directory, what a failed run
//! printed with its transcripts, the processes left in a workspace (and their killing), and the
//! goal a goal loop signs off with the judge that accepts it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};

use serde_json::{Value, json};
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Seq, Store};
use tether_testkit::model_server::FakeModelServer;

use super::{run, runtime, spawn, text};

/// Runs `tether ralph <prompt>` in `dir` to its end with `--events jsonl` and checks that it
/// waited out one usage limit in iteration 1, ran the same iteration again and kept its promise,
/// without a failed iteration. Returns the wait's event line (`{"at_ms", "event"}`).
pub fn ralph_waits_out_one_limit(dir: &Path, prompt: &str) -> Value {
    let args = [
        "ralph",
        prompt,
        "--completion-promise",
        "DONE",
        "--max-iterations",
        "3",
        "--events",
        "jsonl",
    ];
    let out = run(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir, &out));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "run_started",
            "iteration_started",
            "waiting_for_usage_limit",
            "iteration_started",
            "iteration_usage",
            "iteration_completed",
            "run_finished"
        ],
        "{}",
        text(&out.stdout)
    );
    assert_eq!(events[2]["event"]["n"], 1);
    let done = status(dir);
    assert_eq!(
        (done["status"].as_str(), done["iteration"].as_u64()),
        (Some("completed"), Some(1))
    );
    events[2].clone()
}

/// The real CLI named by `var`; a test without it fails (./test.sh installs it).
pub fn required_cli(var: &str, what: &str) -> PathBuf {
    let path = std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} is not set: run ./test.sh, which installs {what} under target/npm-cli and sets it")
    });
    let path = PathBuf::from(path);
    assert!(path.exists(), "{var}={} does not exist", path.display());
    path
}

/// A fake model server playing `script`, with the runtime serving it.
pub fn start(script: Script) -> (tokio::runtime::Runtime, FakeModelServer) {
    let rt = runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    (rt, server)
}

/// `tether ralph <prompt>` promising `DONE`, at most 3 iterations, started in `dir`.
pub fn ralph(dir: &Path, prompt: &str) -> Child {
    spawn(
        dir,
        &[
            "ralph",
            prompt,
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "3",
        ],
    )
}

/// `tether status --json` of the latest run.
pub fn status(dir: &Path) -> Value {
    serde_json::from_slice(&run(dir, &["status", "--json"]).stdout).unwrap()
}

/// Every event of the latest run, in order.
pub fn events(dir: &Path) -> Vec<Event> {
    let store = Store::open(dir.join(".tether/tether.db")).unwrap();
    let run_id = store.latest_run().unwrap().unwrap().id;
    store
        .events(&run_id, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .collect()
}

/// The tool calls of the latest run, as (tool, summary).
pub fn tool_calls(dir: &Path) -> Vec<(String, String)> {
    events(dir)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolCalled { tool, summary, .. } => Some((tool, summary)),
            _ => None,
        })
        .collect()
}

/// What a failed run printed, with its transcripts.
pub fn diagnose(dir: &Path, out: &Output) -> String {
    let mut all = format!(
        "stdout:\n{}\nstderr:\n{}\n",
        text(&out.stdout),
        text(&out.stderr)
    );
    for run in fs::read_dir(dir.join(".tether/runs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for file in fs::read_dir(run.path()).into_iter().flatten().flatten() {
            if file.path().is_dir() {
                continue;
            }
            let body = fs::read_to_string(file.path()).unwrap_or_default();
            all.push_str(&format!("{}:\n{body}\n", file.path().display()));
        }
    }
    all
}

/// The directory of the workspace's one run.
pub fn only_run_dir(dir: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = fs::read_dir(dir.join(".tether/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// Live processes whose working directory is `dir` (the CLI and the `tether mcp` it started),
/// found through /proc; the tether loop itself (`tether ralph`, `run` or `resume`) is left out.
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let dir = fs::canonicalize(dir).unwrap();
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cwd) = fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let cmdline = text(&fs::read(entry.path().join("cmdline")).unwrap_or_default());
        let is_tether_loop = ["ralph", "run", "resume"]
            .iter()
            .any(|verb| cmdline.split('\0').nth(1) == Some(verb));
        let zombie = fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true);
        if cwd == dir && !is_tether_loop && !zombie {
            found.push(pid);
        }
    }
    found
}

/// On drop, kills what is left of a killed tether's turn in the workspace (the CLI and its
/// `tether mcp`), which nobody stops once their parent is gone — also when the test fails.
pub struct Leftovers<'a>(pub &'a Path);

impl Drop for Leftovers<'_> {
    fn drop(&mut self) {
        for pid in processes_in(self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

/// A plan with one active goal, `add`, that `src/lib.rs` holding [`LIB`] fulfils.
pub const PLAN: &str = "# Plan: numbers

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum of its arguments
verify: grep -q 'a + b' src/lib.rs
failure_modes:
- the grep matches a comment
- add is never called

## Log
";

/// What the agent writes to fulfil [`PLAN`].
pub const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

/// A judge that reads `src/lib.rs`, then accepts `add` citing its lines.
pub fn accepting_judge(rt: &tokio::runtime::Runtime) -> FakeModelServer {
    rt.block_on(FakeModelServer::start(Script::turns([
        Turn::tool("read", json!({"path": "src/lib.rs"})),
        Turn::text(format!(
            "Read it.\n```json\n{}\n```",
            json!({
                "verdict": "accept",
                "summary": "add adds",
                "checks": [{"path": "src/lib.rs", "quote": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b",
                            "observation": "the function adds"}],
                "missing": [],
            })
        )),
    ])))
    .unwrap()
}
