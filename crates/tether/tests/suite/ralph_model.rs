//! `tether ralph` as a process, with the built-in agent talking to the fake model server over
//! real HTTP: the files it changes, its exit code and the store's events, for every ending.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::{FakeModelServer, Fault};

use crate::common::{cmd, model_table, run, runtime, text};

struct Env {
    dir: tempfile::TempDir,
    server: FakeModelServer,
    rt: tokio::runtime::Runtime,
}

fn env(api: Api, script: Script) -> Env {
    let rt = runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        model_table("model", api, &server, "fake-model"),
    )
    .unwrap();
    Env { dir, server, rt }
}

impl Env {
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn run(&self, args: &[&str]) -> Output {
        run(self.path(), args)
    }
    fn ralph(&self, max: u32) -> Output {
        self.run(&[
            "ralph",
            "Write the notes.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            &max.to_string(),
        ])
    }
    /// The run's journal, as `(type, n)` pairs from `--json` status and the events table.
    fn events(&self) -> Vec<String> {
        let db = self.path().join(".tether/tether.db");
        let store = tether_store::Store::open(db).unwrap();
        let run = store.latest_run().unwrap().unwrap();
        store
            .events(&run.id, tether_store::Seq(0), usize::MAX)
            .unwrap()
            .into_iter()
            .map(|e| {
                let v = serde_json::to_value(&e).unwrap();
                let ev = &v["event"];
                match ev.get("n") {
                    Some(n) => format!("{} {n}", ev["type"].as_str().unwrap()),
                    None => ev["type"].as_str().unwrap().to_owned(),
                }
            })
            .collect()
    }
}

/// Iteration k: write notes-k.md, then say `finals[k-1]`.
fn write_then_say(finals: &'static [&'static str]) -> Script {
    let mut turns = Vec::new();
    for (i, say) in finals.iter().enumerate() {
        let k = i + 1;
        turns.push(Turn::tool(
            "write",
            json!({"path": format!("notes-{k}.md"), "content": format!("note {k}\n")}),
        ));
        turns.push(Turn::text(*say));
    }
    Script::turns(turns).then_repeat(Turn::text("still working"))
}

#[test]
fn promise_kept_early_over_every_wire_format() {
    for api in [Api::OpenAiChat, Api::OpenAiResponses, Api::Anthropic] {
        let e = env(
            api,
            write_then_say(&["one done", "all done <promise>DONE</promise>"]),
        );
        let out = e.ralph(5);
        assert_eq!(out.status.code(), Some(0), "{api:?}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("promise kept in iteration 2"));
        assert_eq!(
            fs::read_to_string(e.path().join("notes-1.md")).unwrap(),
            "note 1\n"
        );
        assert_eq!(
            fs::read_to_string(e.path().join("notes-2.md")).unwrap(),
            "note 2\n"
        );
        assert_eq!(
            e.events(),
            [
                "run_started",
                "iteration_started 1",
                "tool_called 1",
                "iteration_usage 1",
                "iteration_completed 1",
                "iteration_started 2",
                "tool_called 2",
                "iteration_usage 2",
                "iteration_completed 2",
                "run_finished"
            ],
            "{api:?}"
        );
        // Each iteration starts a fresh conversation: its first request holds only the prompt.
        let requests = e.server.requests();
        assert_eq!(requests.len(), 4);
        assert_eq!(requests[0].raw_body, requests[2].raw_body, "{api:?}");
    }
}

#[test]
fn a_promise_on_the_last_iteration_is_success() {
    let e = env(
        Api::OpenAiChat,
        write_then_say(&["one", "<promise> DONE </promise>"]),
    );
    let out = e.ralph(2);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn no_promise_spends_the_budget_with_exit_3() {
    let e = env(Api::OpenAiChat, write_then_say(&["one", "two", "three"]));
    let out = e.ralph(3);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(e.path().join("notes-3.md").exists());
    assert_eq!(e.events().last().unwrap(), "run_finished");
    let status: Value = serde_json::from_slice(&e.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(status["status"], "budget_exhausted");
}

#[test]
fn a_promise_in_a_non_final_message_is_not_kept() {
    let script = Script::turns([
        Turn::tool("write", json!({"path": "a.md", "content": "a"}))
            .with_text("<promise>DONE</promise>"),
        Turn::text("Not finished yet."),
    ]);
    let e = env(Api::OpenAiChat, script);
    let out = e.ralph(1);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[test]
fn only_the_first_of_several_tags_counts() {
    let script = Script::turns([Turn::text(
        "<promise>NOT YET</promise> <promise>DONE</promise>",
    )]);
    let e = env(Api::OpenAiChat, script);
    let out = e.ralph(1);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[test]
fn model_errors_then_recovery() {
    let e = env(
        Api::OpenAiChat,
        write_then_say(&["<promise>DONE</promise>"]),
    );
    // A 400 is not retried: iteration 1 fails. A 429 with a short retry-after is retried inside
    // the client, so iteration 2 succeeds.
    e.server.fault_on(0, Fault::Status(400));
    e.server.fault_on(1, Fault::rate_limited("0.05"));
    let out = e.ralph(5);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let events = e.events();
    assert_eq!(events[1..3], ["iteration_started 1", "iteration_failed 1"]);
    assert!(text(&out.stdout).contains("promise kept in iteration 2"));

    // Failures in a row stop the loop with exit 1 and the last error.
    let e = env(
        Api::OpenAiChat,
        write_then_say(&["<promise>DONE</promise>"]),
    );
    e.server.fault_next(3, Fault::Status(400));
    let out = e.ralph(5);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("iteration 3 was the last of several failures"));
}

/// Appends a mark per iteration (via bash), then keeps the promise once there are two: the
/// script reads the workspace, so it does not care how many requests came before.
pub(super) fn marks_script(dir: PathBuf) -> Script {
    Script::from_fn(move |req: &Request| {
        let after_tool = req.last_tool_result().is_some();
        if !after_tool {
            return Turn::tool("bash", json!({"command": "echo x >> marks"}));
        }
        let marks = fs::read_to_string(dir.join("marks")).unwrap_or_default();
        if marks.lines().count() >= 2 {
            Turn::text("<promise>DONE</promise>")
        } else {
            Turn::text("one mark down")
        }
    })
}

#[test]
fn kill_9_mid_iteration_then_resume() {
    let rt_dir = tempfile::tempdir().unwrap();
    let marks_dir = rt_dir.path().to_owned();
    let e = env(Api::OpenAiChat, marks_script(marks_dir.clone()));
    // Make the tether workspace the directory the script reads.
    let ws = marks_dir;
    fs::copy(e.path().join("tether.toml"), ws.join("tether.toml")).unwrap();
    // Iteration 2's first model call hangs until the process is killed.
    e.server.fault_on(2, Fault::HoldBeforeHeaders);
    let mut child = cmd(
        &ws,
        &[
            "ralph",
            "Mark.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "5",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    e.rt.block_on(e.server.wait_for_request(2, Duration::from_secs(30)))
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let status = |args: &[&str]| run(&ws, args);
    let s: Value = serde_json::from_slice(&status(&["status", "--json"]).stdout).unwrap();
    assert_eq!(
        (s["orphaned"].as_bool(), s["iteration"].as_u64()),
        (Some(true), Some(1))
    );

    let out = status(&["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("promise kept in iteration 2"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        fs::read_to_string(ws.join("marks"))
            .unwrap()
            .lines()
            .count(),
        2
    );
    let s: Value = serde_json::from_slice(&status(&["status", "--json"]).stdout).unwrap();
    assert_eq!(s["status"], "completed");
}
