//! kill -9 of a run on the team store mid-iteration, then `tether resume` on its machine:
//! nothing lost, nothing doubled.

use std::fs;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tether_config::Api;
use tether_store::{Event, Seq, Store};
use tether_store_pg::TeamStore;
use tether_testkit::model_server::{FakeModelServer, Fault};

use super::{Machine, database};
use crate::common::{model_table, runtime, text};
use crate::suite::ralph_model::marks_script;

#[test]
fn a_run_killed_mid_iteration_resumes_from_the_team_store() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let rt = runtime();
    let server = rt
        .block_on(FakeModelServer::start(marks_script(
            alpha.path().to_owned(),
        )))
        .unwrap();
    fs::write(
        alpha.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake-model"),
    )
    .unwrap();
    // Iteration 2's first model call hangs until the process is killed.
    server.fault_on(2, Fault::HoldBeforeHeaders);
    let ralph = [
        "ralph",
        "Mark.",
        "--completion-promise",
        "DONE",
        "--max-iterations",
        "5",
    ];
    let mut child = alpha
        .cmd(&ralph)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    rt.block_on(server.wait_for_request(2, Duration::from_secs(30)))
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let s: Value = serde_json::from_slice(&alpha.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(
        (s["orphaned"].as_bool(), s["iteration"].as_u64()),
        (Some(true), Some(1)),
        "{s}"
    );
    let out = alpha.run(&["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("promise kept in iteration 2"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        fs::read_to_string(alpha.path().join("marks"))
            .unwrap()
            .lines()
            .count(),
        2
    );

    // The team store's journal: one start per iteration run, one finish, and its projection
    // is the fold of its events.
    let team = TeamStore::connect(db.url().parse().unwrap()).unwrap();
    let store = Store::from_backend(Box::new(team));
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.machine.as_deref(), Some("alpha"));
    let events = store.events(&run.id, Seq(0), usize::MAX).unwrap();
    let started: Vec<u32> = events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::IterationStarted { n }) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [1, 2, 2],
        "iteration 2 was interrupted once and run again"
    );
    let finished = events
        .iter()
        .filter(|e| matches!(e.event, Some(Event::RunFinished { .. })))
        .count();
    assert_eq!(finished, 1);
    assert_eq!(store.rebuild_run_state(&run.id).unwrap(), run.state);
    assert_eq!(
        store.rebuild_iterations(&run.id).unwrap(),
        store.iterations(&run.id).unwrap()
    );
    assert!(!alpha.path().join(".tether/tether.db").exists());
    // The run's report was written when it ended, from the team store.
    let report = fs::read_to_string(
        alpha
            .path()
            .join(format!(".tether/runs/{}/report.md", run.id)),
    )
    .unwrap();
    assert!(
        report.contains("**Outcome:** completed after 2 iteration(s) of 5"),
        "{report}"
    );
    assert!(
        text(&out.stderr).contains(&format!("report: .tether/runs/{}/report.md", run.id)),
        "{}",
        text(&out.stderr)
    );
}
