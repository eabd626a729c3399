//! Reply in the Zulip topic → `ask` returns, with the broker's Zulip channel against the fake
//! Zulip server on loopback; and the HTTP requests made per long-poll timeout while waiting.
//!
//! `QUESTIONS` questions are answered after 1–4 full long-poll timeouts, then `LONG_WAITS` more
//! after 50 each; the requests per timeout are counted over the long waits only (over a short
//! wait the poll already under way when waiting starts would dominate the count).

use std::time::{Duration, Instant};

use tether_config::Workspace;
use tether_store::NewQuestion;
use tether_testkit::zulip_server::{Endpoint, FakeZulipServer};
use tokio_util::sync::CancellationToken;

use crate::Stats;
use crate::common::zulip_broker;

pub const QUESTIONS: usize = 200;
pub const LONG_WAITS: usize = 10;
pub const LONGPOLL: Duration = Duration::from_millis(10);
const WAIT: Duration = Duration::from_secs(30);

pub struct Report {
    pub latency: Stats,
    /// Requests of any kind while the human had not answered yet.
    pub requests: usize,
    pub waiting: Duration,
    pub per_timeout: f64,
}

pub fn run(n: usize) -> Report {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(measure(n))
}

async fn measure(n: usize) -> Report {
    let server = FakeZulipServer::builder()
        .longpoll_timeout(LONGPOLL)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let (_, broker) = zulip_broker(&server, &ws);
    let mut rng = fastrand::Rng::with_seed(11);
    let (mut latencies, mut requests, mut waiting) = (Vec::new(), 0, Duration::ZERO);
    for i in 0..n + LONG_WAITS {
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
        // Every earlier question left two messages: the question and the reply.
        server.wait_for_messages(2 * i + 1, WAIT).await.unwrap();
        let question = server.bot_messages().pop().unwrap();
        // The first poll returns the question's own echo; the human answers part-way into a
        // later, blocked one, after some full long-poll timeouts.
        let polls = server.count(Endpoint::GetEvents);
        let full = if i < n { rng.usize(1..=4) } else { 50 };
        server
            .wait_for_count(Endpoint::GetEvents, polls + full + 2, WAIT)
            .await
            .unwrap();
        tokio::time::sleep(LONGPOLL.mul_f64(0.1 + 0.5 * rng.f64())).await;
        let reply = server.post_as_human(&question.topic, "Yes, merge it.");
        let (got, returned) = asking.await.unwrap();
        assert_eq!(got.unwrap().channel, "zulip");
        let posted_at = server
            .messages()
            .into_iter()
            .find(|m| m.id == reply)
            .unwrap()
            .posted_at;
        latencies.push(returned - posted_at);
        if i < n {
            continue;
        }

        // Waiting starts with the second long-poll after the question was posted.
        let all = server.requests();
        let first_wait = all
            .iter()
            .filter(|r| r.endpoint == Some(Endpoint::GetEvents) && r.at >= question.posted_at)
            .nth(1)
            .unwrap()
            .at;
        requests += all
            .iter()
            .filter(|r| r.at >= first_wait && r.at <= posted_at)
            .count();
        waiting += posted_at - first_wait;
    }
    let per_timeout = requests as f64 / (waiting.as_secs_f64() / LONGPOLL.as_secs_f64());
    Report {
        latency: Stats::of(latencies),
        requests,
        waiting,
        per_timeout,
    }
}
