//! The team dashboard's runs page over a large store: 10,000 runs of 4 machines and 8
//! workspaces, 1,000,000 events, on the embedded store (SQLite) and then on the team store
//! (PostgreSQL, a throwaway cluster: set `TETHER_TEST_PG_BIN`, as `./test.sh` does). Time to the
//! first byte of:
//!
//! 1. the runs page, unfiltered (the newest 200 runs);
//! 2. the runs page of one machine (a quarter of the runs match);
//! 3. the runs page of one state that few runs are in;
//! 4. the runs page of a machine with no runs (the store looks through every run, finds none);
//! 5. `GET /api/runs` of one machine and workspace, 100 runs;
//! 6. the runs page, unfiltered, as the first request of a dashboard just started: every
//!    run's sparkline read from the store (later requests find them kept).
//!
//! p50/p99 of 50 requests each (of 20 dashboards started for 6), then criterion's estimate for
//! 1 and 4. Bar: p99 < 300 ms.
//!
//! The SQLite store is built once (about a minute) and kept as
//! `target/bench-data/runs-10k-events-1m.db`; later runs reuse it. Delete it to rebuild. The
//! PostgreSQL store is built afresh each time, through the store interface.
//! Run with `cargo bench -p tether-web --bench runs_page`. Exits non-zero when a bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[allow(dead_code, unused_imports)]
#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Options, Web};
use criterion::Criterion;
use serde_json::json;
use tether_store::{Connector, EmbeddedFile, Event, Outcome, RunKind, Store};

const RUNS: usize = 10_000;
const EVENTS_PER_RUN: usize = 100;
const MACHINES: usize = 4;
const WORKSPACES_PER_MACHINE: usize = 2;
/// Runs left running (the rest finished): a state few runs are in.
const RUNNING_EVERY: usize = 1000;
/// Dashboards started to time their first request.
const COLD_STARTS: usize = 20;

fn cached_store() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    let dir = target.join("bench-data");
    let path = dir.join("runs-10k-events-1m.db");
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let building = dir.join("runs-10k-events-1m.building.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", building.display()));
    }
    let t0 = Instant::now();
    build(&building);
    std::fs::rename(&building, &path).unwrap();
    println!(
        "built {} ({} runs, {} events) in {:.0} s",
        path.display(),
        RUNS,
        RUNS * EVENTS_PER_RUN,
        t0.elapsed().as_secs_f64()
    );
    path
}

/// Writes the runs through the store, one `append_all` of a run's events at a time, then
/// spreads them over machines and workspaces (a test store is all of this machine).
fn build(path: &Path) {
    let store = Store::open(path).unwrap();
    for i in 0..RUNS {
        let run = store
            .create_run(
                RunKind::Ralph,
                Path::new("/tmp"),
                &json!({"prompt": format!("run {i}: make the tests pass"), "max_iterations": 20}),
            )
            .unwrap();
        store.append_all(Some(&run), &events_of(i)).unwrap();
    }
    drop(store);
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "UPDATE runs SET machine = 'machine-' || (rowid % {MACHINES}), \
         workspace = '/work/machine-' || (rowid % {MACHINES}) || '/app-' || \
         (rowid / {MACHINES} % {WORKSPACES_PER_MACHINE}); \
         PRAGMA wal_checkpoint(TRUNCATE);"
    ))
    .unwrap();
}

/// The same runs and events in a fresh team store (built through the store interface).
fn team_store(db: &tether_testkit::postgres::TestDatabase) -> tether_store_pg::TeamStore {
    let team = tether_store_pg::TeamStore::connect(db.url().parse().unwrap()).unwrap();
    let t0 = Instant::now();
    for i in 0..RUNS {
        let machine = i % MACHINES;
        let workspace = format!(
            "/work/machine-{machine}/app-{}",
            i / MACHINES % WORKSPACES_PER_MACHINE
        );
        let origin = tether_store::Origin {
            machine: format!("machine-{machine}"),
            workspace_root: PathBuf::from(&workspace),
            repo_remote: None,
        };
        let spec = json!({"prompt": format!("run {i}: make the tests pass"), "max_iterations": 20});
        let run = team
            .block(
                team.pg()
                    .create_run_from(RunKind::Ralph, Path::new(&workspace), &spec, &origin),
            )
            .unwrap();
        team.block(team.pg().append_all(Some(&run), &events_of(i)))
            .unwrap();
    }
    println!(
        "built the team store ({RUNS} runs, {} events) in {:.0} s",
        RUNS * EVENTS_PER_RUN,
        t0.elapsed().as_secs_f64()
    );
    team
}

/// Run `i`'s events after `run_started`: 98 steps of work, then the end (or one more step).
fn events_of(i: usize) -> Vec<Event> {
    let mut events = Vec::with_capacity(EVENTS_PER_RUN - 1);
    events.push(Event::IterationStarted { n: 1 });
    for k in 0..EVENTS_PER_RUN - 3 {
        events.push(Event::ToolCalled {
            n: 1,
            tool: "bash".into(),
            summary: format!("bash: step {k} of run {i}"),
        });
    }
    events.push(if i.is_multiple_of(RUNNING_EVERY) {
        Event::ToolCalled {
            n: 1,
            tool: "bash".into(),
            summary: "still going".into(),
        }
    } else {
        Event::RunFinished {
            outcome: Outcome::Completed,
        }
    });
    events
}

struct Stats {
    p50: Duration,
    p99: Duration,
    n: usize,
}

impl Stats {
    fn of(mut s: Vec<Duration>) -> Stats {
        s.sort();
        let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        Stats {
            p50: pick(0.5),
            p99: pick(0.99),
            n: s.len(),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn first_byte(web: &Web, path: &str) -> Duration {
    let mut s = TcpStream::connect(web.addr).unwrap();
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nConnection: close\r\n\r\n",
        web.host(),
        web.bearer()
    );
    let t0 = Instant::now();
    s.write_all(req.as_bytes()).unwrap();
    let mut byte = [0u8; 1];
    s.read_exact(&mut byte).unwrap();
    let took = t0.elapsed();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    assert!(
        String::from_utf8_lossy(&rest).starts_with("TTP/1.1 200"),
        "{path}"
    );
    took
}

/// Measures every page of `web`; whether each met the bar.
fn measure(label: &str, web: &Web) -> bool {
    let mut ok = true;
    let pages = [
        ("runs page, unfiltered", "/"),
        ("runs page, one machine", "/?machine=machine-1"),
        ("runs page, state running (few)", "/?state=running"),
        ("runs page, a machine with no runs", "/?machine=nowhere"),
        (
            "GET /api/runs, one machine and workspace",
            "/api/runs?machine=machine-2&workspace=%2Fwork%2Fmachine-2%2Fapp-1",
        ),
    ];
    for (what, path) in pages {
        first_byte(web, path);
        let s = Stats::of((0..50).map(|_| first_byte(web, path)).collect());
        let good = s.p99 < Duration::from_millis(300);
        println!(
            "{label}: first byte, {what}, {RUNS} runs and {} events: p50 {:.1} ms, p99 {:.1} ms (n = {}) — {}",
            RUNS * EVENTS_PER_RUN,
            ms(s.p50),
            ms(s.p99),
            s.n,
            if good { "ok" } else { "MISSED" }
        );
        ok &= good;
    }
    ok
}

/// Times the first request of each of [`COLD_STARTS`] dashboards over `store`, just started:
/// the unfiltered runs page, every run's sparkline read. Whether it met the bar.
fn measure_cold(label: &str, store: &Arc<dyn Connector>) -> bool {
    let s = Stats::of(
        (0..COLD_STARTS)
            .map(|_| {
                let web = Web::start_with(Options {
                    store: Some(Arc::clone(store)),
                    ..Options::default()
                });
                first_byte(&web, "/")
            })
            .collect(),
    );
    let good = s.p99 < Duration::from_millis(300);
    println!(
        "{label}: first byte, runs page, unfiltered, first request of a dashboard just started, {RUNS} runs and {} events: p50 {:.1} ms, p99 {:.1} ms (n = {}) — {}",
        RUNS * EVENTS_PER_RUN,
        ms(s.p50),
        ms(s.p99),
        s.n,
        if good { "ok" } else { "MISSED" }
    );
    good
}

fn main() -> ExitCode {
    let path = cached_store();
    let embedded: Arc<dyn Connector> = Arc::new(EmbeddedFile(path));
    let mut ok = measure_cold("embedded", &embedded);
    let web = Web::start_with(Options {
        store: Some(embedded),
        ..Options::default()
    });
    ok &= measure("embedded", &web);
    let mut c = Criterion::default().configure_from_args().sample_size(20);
    c.bench_function(
        "first byte: runs page, 10,000 runs, 1,000,000 events",
        |b| b.iter(|| first_byte(&web, "/")),
    );
    c.bench_function(
        "first byte: runs page of a machine with no runs, 10,000 runs, 1,000,000 events",
        |b| b.iter(|| first_byte(&web, "/?machine=nowhere")),
    );
    drop(web);
    let db = tether_testkit::postgres::database().expect("PostgreSQL (set TETHER_TEST_PG_BIN)");
    let team: Arc<dyn Connector> = Arc::new(team_store(&db));
    ok &= measure_cold("team", &team);
    let web = Web::start_with(Options {
        store: Some(team),
        ..Options::default()
    });
    ok &= measure("team", &web);
    c.bench_function(
        "first byte: team runs page, 10,000 runs, 1,000,000 events",
        |b| b.iter(|| first_byte(&web, "/")),
    );
    c.final_summary();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
