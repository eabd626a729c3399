//! What tether adds to an agent CLI, measured with the real CLIs against the scripted fake model
//! server (the model answers at once, so what is left is the CLI and tether):
//!
//! 1. **Overhead per iteration.** The CLI run directly (its own headless command, the prompt on
//!    stdin), then with tether's MCP server as tether configures it, against one iteration of a
//!    `tether ralph` run driving it (the gap between consecutive `iteration_started` events of
//!    the store, so a run's one-time costs are left out), and a whole one-iteration `tether
//!    ralph` process. The difference of the medians is tether's overhead (bar: median < 50 ms).
//! 2. **Answer → the CLI's next model request.** The model calls `ask_human` over MCP each
//!    iteration; the bench answers it the way `tether answer` does (store write, then the
//!    notify poke) and times from that call to the fake server receiving the CLI's next request
//!    (bar: p99 < 100 ms). tether's share of it is timed on its own, with a minimal MCP client
//!    in the CLI's place: answer -> the `ask_human` result arrives.
//!
//! Generic over the agent CLI: each [`Kind`] says how to run its CLI directly and how tether.toml
//! names it. The CLIs come from `TETHER_TEST_CLAUDE`, `TETHER_TEST_CODEX` and `TETHER_TEST_PI`
//! (./test.sh installs them under target/npm-cli); a kind whose variable is unset is skipped with
//! a message. Figures are printed, never asserted.
//!
//! Run with `./test.sh` once (it installs the CLIs), then
//! `TETHER_TEST_CLAUDE=target/npm-cli/claude/node_modules/.bin/claude cargo bench -p tether --bench agent_cli`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/kinds.rs"]
mod kinds;
#[path = "support/stats.rs"]
mod stats;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, QuestionId, Seq, Store};
use tether_testkit::model_server::FakeModelServer;

use kinds::{KINDS, Kind, Setup, SetupFn};
use stats::Stats;

/// Direct runs of the CLI, each way.
const DIRECT_RUNS: usize = 30;
/// Iterations of the measured `tether ralph` run.
const ITERATIONS: usize = 30;
/// Whole one-iteration `tether ralph` processes.
const WHOLE_RUNS: usize = 10;
/// Questions answered in the latency measurement.
const QUESTIONS: usize = 100;

const PROMPT: &str = "Say that you are done.";

fn main() {
    answer_to_mcp_result();
    for kind in &KINDS {
        let Some(program) = std::env::var_os(kind.var).map(PathBuf::from) else {
            println!(
                "{}: skipped ({} is not set; ./test.sh installs the CLIs)",
                kind.name, kind.var
            );
            continue;
        };
        let Some(setup) = kind.setup else {
            println!(
                "{}: skipped (this bench has no setup for it yet)",
                kind.name
            );
            continue;
        };
        let program = std::fs::canonicalize(&program).unwrap();
        let program = program.to_str().unwrap();
        overhead(kind, program, setup);
        answer_latency(kind, program, setup);
    }
}

/// A runtime for the fake server, and a workspace whose tether.toml runs `kind` on it.
fn workspace(
    kind: &Kind,
    program: &str,
    setup: SetupFn,
    script: Script,
) -> (
    tokio::runtime::Runtime,
    FakeModelServer,
    tempfile::TempDir,
    Setup,
) {
    let rt = common::runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut setup = setup(dir.path(), program, &server);
    setup
        .env
        .push(("BENCH_REAL_CLI".to_owned(), program.to_owned()));
    let env: String = setup
        .env
        .iter()
        .filter(|(k, _)| k != "BENCH_REAL_CLI" && !setup.own_env.contains(&k.as_str()))
        .map(|(k, v)| format!("{k} = {v:?}\n"))
        .collect();
    let wrapper = dir.path().join("timed-cli");
    std::fs::write(&wrapper, WRAPPER).unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let toml = format!(
        "[executor]\nkind = \"{}\"\nprogram = {:?}\nturn_timeout_secs = 600\nargs = {:?}\n\
         [executor.env]\n{env}BENCH_REAL_CLI = {program:?}\nBENCH_CLI_LOG = {:?}\n",
        kind.name,
        wrapper.display().to_string(),
        setup.args,
        dir.path().join("cli-tether.log").display().to_string(),
    );
    std::fs::write(dir.path().join("tether.toml"), toml).unwrap();
    (rt, server, dir, setup)
}

/// A wrapper run in the CLI's place: it logs when the real CLI (`$BENCH_REAL_CLI`) started and
/// ended (wall clock, microseconds) to `$BENCH_CLI_LOG`, so the time an iteration spends
/// outside the CLI — tether's own — can be told apart from the CLI's run.
const WRAPPER: &str = r#"#!/bin/bash
# Health checks (`--version`, pi's `mcp list`) are not turns.
case "$1" in --version|mcp) exec "$BENCH_REAL_CLI" "$@" ;; esac
start=$EPOCHREALTIME
"$BENCH_REAL_CLI" "$@"
code=$?
echo "$start $EPOCHREALTIME" >> "$BENCH_CLI_LOG"
exit $code
"#;

fn overhead(kind: &Kind, program: &str, setup: SetupFn) {
    let script = Script::from_fn(|_: &Request| Turn::text("Done."));
    let (_rt, server, dir, setup) = workspace(kind, program, setup, script);
    let ws = dir.path();
    let log = |name: &str| ws.join(format!("cli-{name}.log"));
    let run_direct = |argv: &[String], extra: &[(String, String)], name: &str| {
        let started = Instant::now();
        let mut child = Command::new(ws.join("timed-cli"))
            .args(&argv[1..])
            .envs(setup.env.iter().chain(extra).map(|(k, v)| (k, v)))
            .env("BENCH_CLI_LOG", log(name))
            .current_dir(ws)
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
        assert!(child.wait().unwrap().success(), "{argv:?} failed");
        started.elapsed()
    };
    run_direct(&setup.direct, &[], "warm-up");
    let mut direct = Vec::new();
    let mut with_mcp = Vec::new();
    for _ in 0..DIRECT_RUNS {
        direct.push(run_direct(&setup.direct, &[], "direct"));
        with_mcp.push(run_direct(&setup.with_mcp, &setup.with_mcp_env, "with-mcp"));
    }
    let before = server.request_count();
    let out = common::run(
        ws,
        &["ralph", PROMPT, "--max-iterations", &ITERATIONS.to_string()],
    );
    assert_eq!(out.status.code(), Some(3), "{}", common::text(&out.stderr));
    assert_eq!(
        server.request_count() - before,
        ITERATIONS,
        "one model request per iteration"
    );
    let cycles = iteration_gaps(ws);
    let under_tether = lifetimes(&log("tether"));
    assert_eq!(under_tether.len(), ITERATIONS);
    let mut whole = Vec::new();
    for _ in 0..WHOLE_RUNS {
        let started = Instant::now();
        let out = common::run(ws, &["ralph", PROMPT, "--max-iterations", "1"]);
        assert_eq!(out.status.code(), Some(3), "{}", common::text(&out.stderr));
        whole.push(started.elapsed());
    }
    // The wrapper's own cost (bash starting, the log line): a direct run's wall time minus the
    // CLI's logged lifetime.
    let direct_life = lifetimes(&log("direct"));
    let wrapper: Vec<Duration> = direct
        .iter()
        .zip(&direct_life)
        .map(|(wall, life)| wall.saturating_sub(*life))
        .collect();
    let wrapper = Stats::of(wrapper).median;
    let outside: Vec<Duration> = cycles
        .iter()
        .zip(&under_tether)
        .map(|(cycle, life)| cycle.saturating_sub(*life))
        .collect();
    let stats = |v: &[Duration]| Stats::of(v.to_vec());
    let (outside, life_direct, life_mcp, life_tether) = (
        stats(&outside),
        stats(&direct_life),
        stats(&lifetimes(&log("with-mcp"))),
        stats(&under_tether),
    );
    let (d, i, w) = (stats(&direct), stats(&cycles), stats(&whole));
    println!(
        "{}: overhead per iteration (scripted model answering at once)",
        kind.name
    );
    let row = |what: String, s: &Stats| println!("  {what:<58} {s}");
    row(
        format!("{} run directly, wall ({DIRECT_RUNS} runs)", kind.name),
        &d,
    );
    row("  its process alone".to_owned(), &life_direct);
    row(
        "  its process with tether's MCP server and flags".to_owned(),
        &life_mcp,
    );
    row(
        format!("one iteration of tether ralph ({ITERATIONS} iterations)"),
        &i,
    );
    row("  its process under tether".to_owned(), &life_tether);
    row(
        "  the rest: tether's own work (before the wrapper's cost)".to_owned(),
        &outside,
    );
    row(
        format!("a whole one-iteration tether ralph ({WHOLE_RUNS} runs)"),
        &w,
    );
    println!(
        "  tether's own time per iteration, outside the CLI: median {:.1} ms (bar < 50 ms; \
         the wrapper's {wrapper:.1} ms taken off)",
        (outside.median - wrapper).max(0.0),
    );
    println!(
        "  the CLI's process with tether's MCP server vs alone: {:+.1} ms (median); one \
         iteration vs the bare CLI's wall time: {:+.1} ms; a whole one-iteration run: {:+.1} ms",
        life_mcp.median - life_direct.median,
        i.median - d.median,
        w.median - d.median,
    );
}

/// The CLI's lifetimes the wrapper logged to `log`, in order.
fn lifetimes(log: &Path) -> Vec<Duration> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| {
            let (start, end) = line.split_once(' ').unwrap();
            let secs = |t: &str| t.parse::<f64>().unwrap();
            Duration::from_secs_f64(secs(end) - secs(start))
        })
        .collect()
}

/// The time between consecutive iterations' starts of the latest run (the last one ends at the
/// run's last event).
fn iteration_gaps(ws: &Path) -> Vec<Duration> {
    let store = Store::open(ws.join(".tether/tether.db")).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let events = store.events(&run, Seq(0), usize::MAX).unwrap();
    let mut starts: Vec<i64> = events
        .iter()
        .filter(|e| matches!(e.event, Some(Event::IterationStarted { .. })))
        .map(|e| e.at_ms)
        .collect();
    let last_end = events
        .iter()
        .rev()
        .find(|e| {
            matches!(
                e.event,
                Some(Event::IterationCompleted { .. } | Event::IterationFailed { .. })
            )
        })
        .unwrap()
        .at_ms;
    starts.push(last_end);
    starts
        .windows(2)
        .map(|w| Duration::from_millis(u64::try_from(w[1] - w[0]).unwrap()))
        .collect()
}

fn answer_latency(kind: &Kind, program: &str, setup: SetupFn) {
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "mcp__tether__ask_human",
            json!({"question": "Go on?", "context": "bench", "confidence": 0}),
        ),
        Some(_) => Turn::text("Noted."),
    });
    let (rt, server, dir, _setup) = workspace(kind, program, setup, script);
    let ws = dir.path();
    let mut child = common::spawn(
        ws,
        &["ralph", PROMPT, "--max-iterations", &QUESTIONS.to_string()],
    );
    let store = Store::open(ws.join(".tether/tether.db")).unwrap();
    let mut latencies = Vec::new();
    for _ in 0..QUESTIONS {
        let q = common::pending_question(ws);
        let id: QuestionId = q["id"].as_str().unwrap().parse().unwrap();
        let next = server.request_count();
        let answered = Instant::now();
        tether_human::broker::answer(&store, &ws.join(".tether"), &id, "Yes.", "cli", "bench")
            .unwrap();
        let request = rt
            .block_on(server.wait_for_request(next, common::PATIENCE))
            .unwrap();
        assert!(
            request.raw_body.contains("Human replied: Yes."),
            "{}",
            request.raw_body
        );
        latencies.push(request.received.duration_since(answered));
    }
    let status = common::wait_exit(&mut child);
    assert_eq!(status.code(), Some(3));
    println!(
        "{}: answer -> its next model request ({QUESTIONS} questions): {} (bar p99 < 100 ms)",
        kind.name,
        Stats::of(latencies)
    );
}

/// tether's share of the answer latency: the same answer, the same `tether mcp`, with a minimal
/// MCP client in the CLI's place, timed until the `ask_human` result arrives.
fn answer_to_mcp_result() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    assert!(common::run(ws, &["init"]).status.success());
    let store = Store::open(ws.join(".tether/tether.db")).unwrap();
    let mut server = common::mcp::Server::start(ws, &[], |_| {});
    server.initialize();
    let mut latencies = Vec::new();
    for _ in 0..QUESTIONS {
        let call = server.call_tool(
            "ask_human",
            json!({"question": "Go on?", "context": "bench", "confidence": 0}),
            None,
        );
        let q = common::pending_question(ws);
        let id: QuestionId = q["id"].as_str().unwrap().parse().unwrap();
        let answered = Instant::now();
        tether_human::broker::answer(&store, &ws.join(".tether"), &id, "Yes.", "cli", "bench")
            .unwrap();
        let result = server.response(call);
        latencies.push(answered.elapsed());
        assert!(
            result.to_string().contains("Human replied: Yes."),
            "{result}"
        );
    }
    server.close();
    println!(
        "tether's share: answer -> the ask_human result reaches the MCP client ({QUESTIONS} \
         questions): {}",
        Stats::of(latencies)
    );
}
