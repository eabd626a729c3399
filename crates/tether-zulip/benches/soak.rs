//! The Zulip client's soak: 1,000 seeded chaos runs (every fault of the fake server, noise, human
//! replies at random moments), then the cost and speed of a clean wait.
//!
//! 1. Chaos: each seed must return the human's first reply, with the question posted once.
//!    Prints `N runs, L lost, D duplicated`.
//! 2. Waiting: a human answers after 50 long-poll timeouts, part-way into a blocked long-poll.
//!    Prints the long-polls started per long-poll timeout while waiting (bar ≤ 1.05) and the
//!    answer→return latency p50/p99 on loopback (bar < 20 ms; it includes deregistering the
//!    queue, which `ask()` does before returning).
//!
//! Run with `cargo bench -p tether-zulip --bench soak`. Exits non-zero when a bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/suite/chaos_scenario.rs"]
mod chaos_scenario;

use std::process::ExitCode;
use std::time::{Duration, Instant};

const CHAOS_RUNS: u64 = 1_000;
const TIMED_RUNS: u64 = 40;
const POLLS_PER_WAIT: usize = 50;
const LONGPOLL: Duration = Duration::from_millis(10);

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(soak())
}

async fn soak() -> ExitCode {
    let started = Instant::now();
    let (mut lost, mut duplicated, mut requests) = (0, 0, 0);
    for seed in 0..CHAOS_RUNS {
        let report = chaos_scenario::run(seed).await;
        requests += report.requests;
        if report.lost() {
            lost += 1;
        }
        if report.duplicated() {
            duplicated += 1;
        }
        if report.lost() || report.duplicated() {
            eprintln!("{report:#?}");
        }
    }
    println!(
        "{CHAOS_RUNS} runs, {lost} lost, {duplicated} duplicated ({requests} requests, {:.1} s)",
        started.elapsed().as_secs_f64()
    );

    let (mut polls, mut waited) = (0usize, Duration::ZERO);
    let mut latencies = Vec::new();
    for seed in 0..TIMED_RUNS {
        let (n, waiting, latency) =
            chaos_scenario::timed_wait(seed, LONGPOLL, POLLS_PER_WAIT).await;
        polls += n;
        waited += waiting;
        latencies.push(latency);
    }
    latencies.sort();
    let per_timeout = polls as f64 / (waited.as_secs_f64() / LONGPOLL.as_secs_f64());
    let percentile = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    let (p50, p99) = (percentile(0.50), percentile(0.99));
    println!(
        "waiting: {polls} long-polls in {:.2} s of waiting at a {} ms long-poll timeout = {per_timeout:.3} requests per timeout (bar <= 1.05)",
        waited.as_secs_f64(),
        LONGPOLL.as_millis()
    );
    println!(
        "answer->return latency over {TIMED_RUNS} waits: p50 {:.2} ms, p99 {:.2} ms (bar < 20 ms)",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
    let ok = lost == 0 && duplicated == 0 && per_timeout <= 1.05 && p99 < Duration::from_millis(20);
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("FAILED: a bar was missed");
        ExitCode::FAILURE
    }
}
