//! An ntfy button press → `Broker::ask` returns, with the broker's ntfy sink against the fake
//! ntfy server on loopback.
//!
//! `QUESTIONS` questions with three options are asked one after another; for each, once its
//! push is on the topic and tether follows the reply topic, the bench does what the phone does
//! for a pressed button (a POST of the button's body to the reply topic, over a fresh
//! connection) and measures from just before that request to `ask` returning: the server
//! storing and streaming the press, the follower reading it, the nonce check, the broker
//! storing the answer (the SQLite write) and waking. Bar: p99 < 50 ms.
//!
//! Run with `cargo bench -p tether-human --bench ntfy`. Exits non-zero when the bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_config::Workspace;
use tether_human::ntfy::Ntfy;
use tether_human::tables::ntfy::NtfyConfig;
use tether_human::{Broker, DynChannel};
use tether_store::{Journal, NewQuestion, Store};
use tether_testkit::FakeNtfyServer;
use tokio_util::sync::CancellationToken;

const QUESTIONS: usize = 200;
const WAIT: Duration = Duration::from_secs(30);

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(measure())
}

async fn measure() -> ExitCode {
    let server = FakeNtfyServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let config = NtfyConfig {
        server: server.url(),
        topic: Some("bench".into()),
        ..NtfyConfig::default()
    };
    let channel: Arc<dyn DynChannel> =
        Arc::new(Ntfy::from_config(&config, None, journal.clone(), ws.state_dir()).unwrap());
    let broker = Broker::new(journal, ws.state_dir(), vec![channel]);
    let mut rng = fastrand::Rng::with_seed(7);
    let mut latencies = Vec::with_capacity(QUESTIONS);
    for i in 0..QUESTIONS {
        let b = broker.clone();
        let asking = tokio::spawn(async move {
            let ask = NewQuestion {
                question: format!("Merge migration {i}?"),
                context: "all tests pass".into(),
                confidence: Some(20),
                options: vec!["merge".into(), "wait".into(), "drop it".into()],
                ..NewQuestion::default()
            };
            let got = b.ask(ask, CancellationToken::new()).await;
            (got, Instant::now())
        });
        server
            .wait_for("the push and the reply topic followed", WAIT, |s| {
                s.messages("bench").len() > i && s.open_streams() == 1
            })
            .await
            .unwrap();
        let push = server.messages("bench").pop().unwrap();
        let pick = rng.usize(0..3);
        let action = push["actions"][pick].clone();
        let pressed = Instant::now();
        assert_eq!(server.press(&action).await.unwrap(), 200);
        let (got, returned) = asking.await.unwrap();
        let got = got.unwrap();
        assert_eq!((got.channel.as_str(), got.choice), ("ntfy", Some(pick)));
        latencies.push(returned - pressed);
        server
            .wait_for("the follower stopped", WAIT, |s| s.open_streams() == 0)
            .await
            .unwrap();
    }
    latencies.sort();
    let pick = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    let (p50, p99, max) = (pick(0.5), pick(0.99), latencies[latencies.len() - 1]);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "ntfy: button press -> ask returns, {} presses: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (bar p99 < 50 ms)",
        latencies.len(),
        ms(p50),
        ms(p99),
        ms(max)
    );
    if p99 < Duration::from_millis(50) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
