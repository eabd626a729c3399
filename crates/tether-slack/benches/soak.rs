//! The Slack client's soak: 1,000 seeded chaos runs (every fault of the fake Slack, socket
//! trouble, noise, answers at random moments), then the cost and speed of a clean wait.
//!
//! 1. Chaos: each seed must return the human's first answer, with the question posted once.
//!    Prints `N runs, L lost, D duplicated`.
//! 2. Waiting: once the socket is up and the thread caught up, a human answers after noise in
//!    the thread. Prints the HTTP requests made while waiting (bar: 0 — no polling while the
//!    socket is up) and the reply→return latency p50/p99 on loopback (bar < 20 ms), for a typed
//!    reply and a button press alternately.
//!
//! Run with `cargo bench -p tether-slack --bench soak`. Exits non-zero when a bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../tests/suite/common.rs"]
mod common;

#[path = "../tests/suite/chaos_scenario.rs"]
mod chaos_scenario;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tether_slack::{SlackClient, option_action_id};
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::SlackMethod;
use tokio_util::sync::CancellationToken;

const CHAOS_RUNS: u64 = 1_000;
const TIMED_RUNS: usize = 200;

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
    let (mut lost, mut duplicated, mut requests) = (0, 0, 0);
    for seed in 0..CHAOS_RUNS {
        let report = chaos_scenario::run(seed).await;
        requests += report.requests;
        lost += usize::from(report.lost());
        duplicated += usize::from(report.duplicated());
        if report.lost() || report.duplicated() {
            eprintln!("{report:#?}");
        }
    }
    println!(
        "{CHAOS_RUNS} runs, {lost} lost, {duplicated} duplicated ({requests} requests, {:.1} s)",
        started.elapsed().as_secs_f64()
    );

    let server = FakeSlackServer::start().await.unwrap();
    let client =
        SlackClient::with_options(&common::settings(&server), common::fast_options()).unwrap();
    let options = common::labels(&["Yes", "No"]);
    let (mut latencies, mut while_waiting) = (Vec::new(), 0usize);
    for run in 0..TIMED_RUNS {
        let pending = common::ask(&client, "Timed?", &options, None).await;
        let (thread, question) = (pending.thread().ts, pending.question_ts().clone());
        let replies = server.requests(SlackMethod::Replies);
        let waiting = tokio::spawn(async move {
            let reply = pending.wait(&CancellationToken::new()).await;
            (reply, Instant::now())
        });
        server.wait_for_sockets(1, common::WAIT).await.unwrap();
        tether_testkit::wait_until_async("the first catch-up", common::WAIT, || {
            (server.requests(SlackMethod::Replies) > replies).then_some(())
        })
        .await
        .unwrap();
        let since = Instant::now();
        for n in 0..5 {
            server.post_as_bot(thread.as_str(), &format!("noise {n}"));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
        let answered = Instant::now();
        if run % 2 == 0 {
            server.reply(thread.as_str(), FakeSlackServer::HUMAN, "yes");
        } else {
            server.press_button(
                question.as_str(),
                FakeSlackServer::HUMAN,
                &option_action_id(1),
            );
        }
        let (reply, returned) = tokio::time::timeout(common::WAIT, waiting)
            .await
            .unwrap()
            .unwrap();
        reply.unwrap();
        while_waiting += server.all_requests_since(since);
        latencies.push(returned - answered);
    }
    latencies.sort();
    let percentile = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    let (p50, p99) = (percentile(0.50), percentile(0.99));
    println!(
        "waiting: {while_waiting} HTTP requests over {TIMED_RUNS} waits while the socket was up (bar: 0)"
    );
    println!(
        "reply->return latency over {TIMED_RUNS} waits: p50 {:.2} ms, p99 {:.2} ms (bar < 20 ms)",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
    let ok = lost == 0 && duplicated == 0 && while_waiting == 0 && p99 < Duration::from_millis(20);
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("FAILED: a bar was missed");
        ExitCode::FAILURE
    }
}
