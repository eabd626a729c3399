//! Reply on Telegram → `Broker::ask` returns, with the broker's Telegram channel against the
//! fake Bot API on loopback; and the `getUpdates` requests made per long-poll timeout while
//! waiting.
//!
//! `QUESTIONS` questions are each answered part-way into a blocked long-poll after 1–4 full
//! long-poll timeouts; then `LONG_WAITS` more after 50 timeouts each, over which the requests
//! are counted. The latency runs from the human's reply reaching the server to `ask` returning:
//! the poller receives it, stores it in the workspace (the SQLite write, then the poke), the
//! broker wakes, and the channel's poller stops. Bars: p99 < 20 ms; ≤ 1.05 `getUpdates` per
//! long-poll timeout.
//!
//! Run with `cargo bench -p tether-human --bench telegram`. Exits non-zero when a bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_config::{Secret, Workspace};
use tether_human::Broker;
use tether_store::{Journal, NewQuestion, Store};
use tether_telegram::{ApiOptions, ClientOptions, RetryPolicy, TelegramClient, TelegramSettings};
use tether_testkit::telegram_server::{FakeTelegramServer, Method};
use tokio_util::sync::CancellationToken;

const QUESTIONS: usize = 200;
const LONG_WAITS: usize = 5;
const LONGPOLL: Duration = Duration::from_millis(10);
const WAIT: Duration = Duration::from_secs(30);
const GROUP: i64 = FakeTelegramServer::GROUP;

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(measure())
}

async fn measure() -> ExitCode {
    let server = FakeTelegramServer::builder()
        .longpoll_timeout(LONGPOLL)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let registry = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let (_, broker) = telegram_broker(&server, &ws, registry.path());
    let mut rng = fastrand::Rng::with_seed(13);
    let (mut latencies, mut polls, mut timeouts) = (Vec::new(), 0usize, 0usize);
    for i in 0..QUESTIONS + LONG_WAITS {
        let b = broker.clone();
        let asking = tokio::spawn(async move {
            let ask = NewQuestion {
                question: format!("Merge migration {i}?"),
                context: "all tests pass".into(),
                confidence: Some(20),
                ..NewQuestion::default()
            };
            let got = b.ask(ask, CancellationToken::new()).await;
            (got, Instant::now())
        });
        tether_testkit::wait_until_async("the question posted", WAIT, || {
            (server.bot_messages(GROUP).len() > i).then_some(())
        })
        .await
        .unwrap();
        let question = server.bot_messages(GROUP).pop().unwrap();
        let full = if i < QUESTIONS { rng.usize(1..=4) } else { 50 };
        let before = server.count(Method::GetUpdates);
        server
            .wait_for_count(Method::GetUpdates, before + 1, WAIT)
            .await
            .unwrap();
        let started = Instant::now();
        let first = server.count(Method::GetUpdates);
        server
            .wait_for_count(Method::GetUpdates, first + full, WAIT)
            .await
            .unwrap();
        tokio::time::sleep(LONGPOLL.mul_f64(0.1 + 0.5 * rng.f64())).await;
        if i >= QUESTIONS {
            let waited = started.elapsed();
            polls += server.count(Method::GetUpdates) - first;
            timeouts += (waited.as_secs_f64() / LONGPOLL.as_secs_f64()).round() as usize;
        }
        let replied = Instant::now();
        server.reply(
            &server.alice(),
            GROUP,
            question.message_id,
            "Yes, merge it.",
        );
        let (got, returned) = asking.await.unwrap();
        assert_eq!(got.unwrap().channel, "telegram");
        latencies.push(returned - replied);
    }
    latencies.sort();
    let pick = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    let (p50, p99, max) = (pick(0.5), pick(0.99), latencies[latencies.len() - 1]);
    let per_timeout = polls as f64 / timeouts as f64;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "telegram: reply -> ask returns, {} questions: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (bar p99 < 20 ms)",
        latencies.len(),
        ms(p50),
        ms(p99),
        ms(max)
    );
    println!(
        "telegram: {polls} getUpdates over {timeouts} long-poll timeouts while waiting = {per_timeout:.3} per timeout (bar <= 1.05)"
    );
    if p99 < Duration::from_millis(20) && per_timeout <= 1.05 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The workspace's journal and a broker whose one channel is the fake server's bot, asking in
/// its group, with the bot's registry under `registry`.
fn telegram_broker(
    server: &FakeTelegramServer,
    ws: &Workspace,
    registry: &Path,
) -> (Journal, Broker) {
    let settings = TelegramSettings::new(
        &server.api_url(),
        Secret::new(server.token().to_owned()),
        &GROUP.to_string(),
    )
    .unwrap();
    let options = ClientOptions {
        api: ApiOptions {
            poll_timeout: Duration::from_secs(1),
            ..ApiOptions::default()
        },
        retry: RetryPolicy {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(50),
            request_retries: 6,
        },
        registry_base: Some(registry.to_path_buf()),
        ..ClientOptions::default()
    };
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let channel = Arc::new(tether_human::telegram::channel(
        TelegramClient::new(&settings, options).unwrap(),
        journal.clone(),
        ws.state_dir(),
    ));
    let broker = Broker::new(journal.clone(), ws.state_dir(), vec![channel]);
    (journal, broker)
}
