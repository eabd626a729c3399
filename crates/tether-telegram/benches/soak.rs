//! The Telegram client's soak: 1,000 seeded chaos runs (every fault of the fake Bot API, noise,
//! human replies and button presses at random moments, poller hand-overs), then the cost and
//! speed of a clean wait. A third of the chaos runs ask in a chat with forum topics.
//!
//! 1. Chaos: each seed must record the human's first answer, with the question posted once.
//!    Prints `N runs, L lost, D duplicated`.
//! 2. Waiting: a human answers after 50 server long-poll timeouts. Prints the `getUpdates`
//!    requests per long-poll timeout while waiting (bar ≤ 1.05: one long-poll per timeout) and
//!    the latency from the reply reaching the server to the answer being handed to the store,
//!    p50/p99 on loopback (bar < 20 ms).
//!
//! Run with `cargo bench -p tether-telegram --bench soak`. Exits non-zero when a bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/suite/chaos_scenario.rs"]
mod chaos_scenario;
#[path = "../tests/suite/common.rs"]
mod common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tether_testkit::telegram_server::{FakeTelegramServer, Method};

const CHAOS_RUNS: u64 = 1_000;
const TIMED_RUNS: usize = 200;
const POLLS_PER_WAIT: u32 = 50;
const LONGPOLL: Duration = Duration::from_millis(10);

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(soak())
}

async fn soak() -> ExitCode {
    let started = Instant::now();
    let (mut lost, mut duplicated, mut requests, mut handovers, mut forums) = (0, 0, 0, 0, 0);
    for seed in 0..CHAOS_RUNS {
        let report = chaos_scenario::run(seed).await;
        requests += report.requests;
        handovers += usize::from(report.handover);
        forums += usize::from(report.forum);
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
        "{CHAOS_RUNS} runs, {lost} lost, {duplicated} duplicated ({forums} in forum topics, {handovers} with a poller hand-over, {requests} requests, {:.1} s)",
        started.elapsed().as_secs_f64()
    );

    let polls = polls_per_timeout().await;
    println!("getUpdates per long-poll timeout while waiting: {polls:.3} (bar <= 1.05)");

    let mut latencies = Vec::with_capacity(TIMED_RUNS);
    for _ in 0..TIMED_RUNS {
        latencies.push(reply_to_answer().await);
    }
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p).ceil() as usize).saturating_sub(1)];
    let (p50, p99) = (pct(0.50), pct(0.99));
    println!(
        "reply -> answer stored, {TIMED_RUNS} runs: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (bar p99 < 20 ms)",
        ms(p50),
        ms(p99),
        ms(*latencies.last().unwrap())
    );
    if lost == 0 && duplicated == 0 && polls <= 1.05 && p99 < Duration::from_millis(20) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A question waited on for 50 long-poll timeouts: the `getUpdates` made meanwhile, per timeout.
async fn polls_per_timeout() -> f64 {
    let longpoll = Duration::from_millis(20);
    let server = common::server(longpoll).await;
    let dir = tempfile::tempdir().unwrap();
    let client = common::client(&server, dir.path(), longpoll);
    let post = common::ask(&client, "q-wait", "/ws", "Wait?", &[]).await;
    let recorder = common::Recorder::new();
    let (stop, task) = common::serve(&client, &recorder);
    tether_testkit::wait_until_async("the first poll", Duration::from_secs(5), || {
        (server.count(Method::GetUpdates) >= 1).then_some(())
    })
    .await
    .unwrap();
    let before = server.count(Method::GetUpdates);
    tokio::time::sleep(longpoll * POLLS_PER_WAIT).await;
    let during = server.count(Method::GetUpdates) - before;
    server.reply(
        &server.alice(),
        FakeTelegramServer::GROUP,
        post.message_id,
        "ok",
    );
    recorder.wait("q-wait", Duration::from_secs(5)).await;
    stop.cancel();
    task.await.unwrap().unwrap();
    during as f64 / f64::from(POLLS_PER_WAIT)
}

/// A reply made while the poller is blocked in a long-poll: the time until it is handed to the
/// store.
async fn reply_to_answer() -> Duration {
    let server = common::server(Duration::from_secs(5)).await;
    let dir = tempfile::tempdir().unwrap();
    let client = common::client(&server, dir.path(), LONGPOLL);
    let post = common::ask(&client, "q-time", "/ws", "Fast?", &[]).await;
    let recorder = common::Recorder::new();
    let (stop, task) = common::serve(&client, &recorder);
    tether_testkit::wait_until_async("a blocked poll", Duration::from_secs(5), || {
        (server.count(Method::GetUpdates) >= 1).then_some(())
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(2)).await;
    let replied = Instant::now();
    server.reply(
        &server.alice(),
        FakeTelegramServer::GROUP,
        post.message_id,
        "now",
    );
    recorder.wait("q-time", Duration::from_secs(5)).await;
    let took = recorder.answered_at("q-time").unwrap() - replied;
    stop.cancel();
    task.await.unwrap().unwrap();
    took
}
