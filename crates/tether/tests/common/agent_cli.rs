//! What the end-to-end tests of the agent CLIs (Claude Code, Codex) share: the real CLI's path
//! from the variable ./test.sh sets, a Ralph loop to run, the run's status and events, what a
//! failed run printed with its transcripts, and the processes still working in a workspace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};

use serde_json::Value;
use tether_model::scripted::Script;
use tether_store::{Event, Seq, Store};
use tether_testkit::model_server::FakeModelServer;

use super::{run, runtime, spawn, text};

/// The real CLI named by `var`; a test without it fails (./test.sh installs it and sets `var`).
pub fn real_cli(var: &str, what: &str) -> PathBuf {
    let path = std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} is not set: run ./test.sh, which installs {what} under target/npm-cli and sets it")
    });
    let path = PathBuf::from(path);
    assert!(path.exists(), "{var}={} does not exist", path.display());
    path
}

/// A runtime and a fake model server playing `script` on it.
pub fn start(script: Script) -> (tokio::runtime::Runtime, FakeModelServer) {
    let rt = runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    (rt, server)
}

/// `tether ralph <prompt>` promising `DONE` within three iterations, started in `dir`.
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
            let body = fs::read_to_string(file.path()).unwrap_or_default();
            all.push_str(&format!("{}:\n{body}\n", file.path().display()));
        }
    }
    all
}

/// The one run directory under `.tether/runs`.
pub fn only_run_dir(dir: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = fs::read_dir(dir.join(".tether/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// Live processes whose working directory is `dir` (the CLI and the `tether mcp` it started),
/// found through /proc; the tether loop itself (`ralph`, `run`, `resume`) is not counted.
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
