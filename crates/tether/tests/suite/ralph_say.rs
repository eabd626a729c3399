//! `tether say` to a running Ralph loop, end to end: the real binary drives the built-in agent
//! against the fake model server, another `tether` process sends a message while iteration 1
//! is in flight, and the request that opens iteration 2 carries it (recorded as delivered).

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

const MESSAGE: &str = "use the fixtures in tests/data, not the network";

/// Waits (with a deadline) until `what` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tether(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tether"));
    c.args(args)
        .current_dir(dir)
        .env_remove("TETHER_CONFIG")
        .env_remove("TETHER_LOG")
        .env("USER", "ana")
        // Not the machine's git identity: the person is `ana`.
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null());
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn wait_output(mut child: Child) -> Output {
    wait_until("tether ralph to exit", || {
        child.try_wait().unwrap().is_some()
    });
    child.wait_with_output().unwrap()
}

/// The run's events as `type` or `type n`.
fn events(dir: &Path) -> Vec<String> {
    let store = tether_store::Store::open(dir.join(".tether/tether.db")).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    store
        .events(&run.id, tether_store::Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|e| {
            let event = &serde_json::to_value(&e).unwrap()["event"];
            let kind = event["type"].as_str().unwrap().to_owned();
            match event.get("n") {
                Some(n) => format!("{kind} {n}"),
                None => kind,
            }
        })
        .collect()
}

#[test]
fn a_message_said_during_an_iteration_opens_the_next_iterations_prompt() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // Iteration 1: a shell call that signals it is running and waits for `go`, then a summary.
    // Iteration 2: the promise.
    let script = Script::turns([
        Turn::tool(
            "bash",
            json!({"command": "touch waiting; while [ ! -f go ]; do sleep 0.05; done"}),
        ),
        Turn::text("step one done"),
        Turn::text("all done <promise>DONE</promise>"),
    ]);
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    fs::write(
        ws.join("tether.toml"),
        format!(
            "[model]\napi = \"{}\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\n",
            Api::OpenAiChat.as_str(),
            server.base_url(Api::OpenAiChat)
        ),
    )
    .unwrap();

    let ralph = tether(
        ws,
        &[
            "ralph",
            "Write the notes.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "3",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_until("iteration 1's shell call", || ws.join("waiting").exists());

    let said = tether(ws, &["say", MESSAGE]).output().unwrap();
    assert!(said.status.success(), "{}", text(&said.stderr));
    assert!(
        text(&said.stdout).contains("delivered at the start of its next iteration"),
        "{}",
        text(&said.stdout)
    );
    fs::write(ws.join("go"), "").unwrap();

    let out = wait_output(ralph);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("promise kept in iteration 2"));

    // What the model was sent: iteration 1's opening request (0) does not carry the message,
    // iteration 2's (2) does, from who sent it, after the loop's unchanged prompt.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(!requests[0].raw_body.contains(MESSAGE));
    let opening = &requests[2].raw_body;
    assert!(
        opening.contains(&format!("A message from ana: {MESSAGE}")),
        "{opening}"
    );
    assert!(opening.contains("Write the notes."), "{opening}");

    // Recorded like in the goal loop: queued while iteration 1 ran, delivered with iteration 2.
    let events = events(ws);
    let at = |e: &str| {
        events
            .iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("no {e} in {events:?}"))
    };
    assert!(
        at("iteration_started 1") < at("message_queued"),
        "{events:?}"
    );
    assert!(
        at("message_queued") < at("iteration_completed 1"),
        "{events:?}"
    );
    assert!(
        at("iteration_completed 1") < at("message_delivered 2"),
        "{events:?}"
    );
    assert!(
        at("message_delivered 2") < at("iteration_started 2"),
        "{events:?}"
    );

    // Delivered once: no later iteration takes it again.
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("message_delivered"))
            .count(),
        1,
        "{events:?}"
    );
}
