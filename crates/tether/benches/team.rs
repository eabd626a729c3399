//! Team mode against the embedded store, on the release binary and a real PostgreSQL:
//!
//! - **answer → ask**: a `tether ask` process ("machine A") waits; this process ("machine B",
//!   another workspace) stores the answer; measured from the answer's commit to A printing it
//!   (bar: p99 < 50 ms on the team store). The embedded store's figure is the same two
//!   processes on one workspace's file, woken through its notification socket.
//! - **appends**: 20 runs appending events at once, each through its own connection (as 20
//!   loops on 20 machines would); events committed per second (bar: ≥ 2,000 on the team store).
//!
//! Run with `./test.sh --bench team` (it sets up PostgreSQL), or `cargo bench -p tether --bench
//! team` with `TETHER_TEST_PG_BIN` set. Exits non-zero when a bar is missed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use tether_store::{Connector, EmbeddedFile, Event, RunKind, Store};
use tether_store_pg::TeamStore;

const ROUNDS: usize = 60;
const RUNS: usize = 20;
const EVENTS_PER_RUN: usize = 250;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// One round: `tether ask` in `asker_ws` (with `env`), answered through `answerer`.
fn answer_round(
    asker_ws: &Path,
    env: &[(&str, String)],
    answerer: &Store,
    state: &Path,
) -> Duration {
    let mut ask = common::cmd(asker_ws, &["ask", "Ship it?"]);
    for (k, v) in env {
        ask.env(k, v);
    }
    let mut child = ask
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let question = loop {
        if let Some(q) = answerer.pending_questions().unwrap().into_iter().next() {
            break q;
        }
        assert!(Instant::now() < deadline, "no question was asked");
        std::thread::sleep(Duration::from_millis(2));
    };
    // The asker subscribes right after storing the question; give it that moment.
    std::thread::sleep(Duration::from_millis(50));
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let began = Instant::now();
    tether_human::broker::answer(answerer, state, &question.id, "yes", "cli", "bench").unwrap();
    out.read_line(&mut line).unwrap();
    let took = began.elapsed();
    assert_eq!(line.trim(), "yes");
    child.wait().unwrap();
    took
}

fn answers(
    label: &str,
    asker_ws: &Path,
    env: &[(&str, String)],
    answerer: &Store,
    state: &Path,
) -> Duration {
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| answer_round(asker_ws, env, answerer, state))
        .collect();
    times.sort();
    let p99 = percentile(&times, 0.99);
    println!(
        "answer → ask, {label}: p50 {:.2} ms · p99 {:.2} ms ({ROUNDS} rounds)",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
    p99
}

/// Events per second with [`RUNS`] runs appending at once, each through its own store.
fn appends(label: &str, connect: &(dyn Fn() -> Store + Sync)) -> f64 {
    let stores: Vec<Store> = (0..RUNS).map(|_| connect()).collect();
    let barrier = Arc::new(Barrier::new(RUNS));
    let began = Instant::now();
    std::thread::scope(|scope| {
        for store in stores {
            let barrier = Arc::clone(&barrier);
            scope.spawn(move || {
                let run = store
                    .create_run(RunKind::Ralph, "/bench".as_ref(), &serde_json::json!({}))
                    .unwrap();
                barrier.wait();
                for i in 0..EVENTS_PER_RUN {
                    let event = Event::ToolCalled {
                        n: 1,
                        tool: "bash".into(),
                        summary: format!("call {i}"),
                    };
                    store.append(Some(&run), &event).unwrap();
                }
            });
        }
    });
    let rate = (RUNS * EVENTS_PER_RUN) as f64 / began.elapsed().as_secs_f64();
    println!("appends from {RUNS} runs at once, {label}: {rate:.0} events/s");
    rate
}

fn main() -> ExitCode {
    // The embedded store: both processes on one workspace's file.
    let ws = tempfile::tempdir().unwrap();
    let local = EmbeddedFile(ws.path().join(".tether/tether.db"));
    let state = ws.path().join(".tether");
    answers(
        "embedded",
        ws.path(),
        &[],
        &local.connect().unwrap(),
        &state,
    );
    appends("embedded", &|| local.connect().unwrap());

    // The team store: "machine A" asks in one workspace, "machine B" answers from another.
    let db = tether_testkit::postgres::database().expect("PostgreSQL (run through ./test.sh)");
    let team = TeamStore::connect(db.url().parse().unwrap()).unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let env = [
        ("TETHER_STORE_URL", db.url()),
        ("TETHER_MACHINE", "alpha".to_owned()),
    ];
    let p99 = answers(
        "team",
        a.path(),
        &env,
        &team.connect().unwrap(),
        &b.path().join(".tether"),
    );
    let url = db.url();
    let rate = appends("team", &|| {
        TeamStore::connect(url.parse().unwrap())
            .unwrap()
            .connect()
            .unwrap()
    });
    if p99 > Duration::from_millis(50) || rate < 2000.0 {
        println!("MISSED: the bars are p99 < 50 ms and ≥ 2,000 events/s");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
