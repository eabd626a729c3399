//! 1,000 questions waiting at once in one process: the memory and descriptors they hold, then
//! a burst of answers from another thread.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tether_config::Workspace;
use tether_human::Broker;
use tether_human::broker::answer;
use tether_store::Journal;
use tether_store::NewQuestion;
use tether_store::{QuestionId, Store};
use tether_testkit::wait_until;
use tokio_util::sync::CancellationToken;

use crate::{Stats, open_fds, status_kb};

pub const QUESTIONS: usize = 1_000;

pub struct Report {
    pub rss_before_kb: u64,
    pub rss_pending_kb: u64,
    pub fds_before: usize,
    pub fds_pending: usize,
    /// Sockets in `.tether/notify/` while the questions wait.
    pub sockets: usize,
    pub burst: Duration,
    pub latency: Stats,
}

fn ask(i: usize) -> NewQuestion {
    NewQuestion {
        question: format!("Question {i}: which of the two designs?"),
        context: "the bench".into(),
        confidence: Some(10),
        ..NewQuestion::default()
    }
}

pub fn run(n: usize) -> Report {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let broker = Broker::new(journal, ws.state_dir(), Vec::new());
    let answers = Store::open(ws.db_path()).unwrap();

    // One question asked and answered first, so lazily built state is not counted as the
    // pending questions' cost.
    let (tx, rx) = mpsc::channel::<QuestionId>();
    let b = broker.clone();
    let warm = runtime.spawn(async move {
        b.ask_with(ask(0), CancellationToken::new(), |q| {
            tx.send(q.id.clone()).unwrap();
        })
        .await
    });
    let id = rx.recv().unwrap();
    answer(&answers, &ws.state_dir(), &id, "warm", "cli", "bench").unwrap();
    runtime.block_on(warm).unwrap().unwrap();

    let rss_before_kb = status_kb("VmRSS");
    let fds_before = open_fds();
    let (tx, rx) = mpsc::channel::<QuestionId>();
    let mut waiting = Vec::with_capacity(n);
    for i in 0..n {
        let (b, tx) = (broker.clone(), tx.clone());
        waiting.push(runtime.spawn(async move {
            let got = b
                .ask_with(ask(i), CancellationToken::new(), |q| {
                    tx.send(q.id.clone()).unwrap();
                })
                .await
                .unwrap();
            (got.question_id, Instant::now())
        }));
    }
    drop(tx);
    let ids: Vec<QuestionId> = rx.iter().take(n).collect();
    assert_eq!(ids.len(), n);
    // Every question is stored and its waiter subscribes right after: wait for the socket.
    let notify_dir = ws.state_dir().join("notify");
    wait_until(
        "the waiters' notification socket",
        Duration::from_secs(10),
        || {
            let mut entries = std::fs::read_dir(&notify_dir).ok()?.flatten();
            entries
                .any(|e| e.path().extension().is_some_and(|x| x == "sock"))
                .then_some(())
        },
    )
    .unwrap();
    let rss_pending_kb = status_kb("VmRSS");
    let fds_pending = open_fds();
    let sockets = std::fs::read_dir(ws.state_dir().join("notify")).map_or(0, Iterator::count);

    let state = ws.state_dir();
    let burst = std::thread::spawn(move || {
        let started = Instant::now();
        let mut t0 = HashMap::with_capacity(ids.len());
        for id in ids {
            t0.insert(id.clone(), Instant::now());
            answer(&answers, &state, &id, "burst", "cli", "bench").unwrap();
        }
        (t0, started.elapsed())
    });
    let (t0, burst) = burst.join().unwrap();
    let mut latencies = Vec::with_capacity(n);
    for w in waiting {
        let (id, t1) = runtime.block_on(w).unwrap();
        latencies.push(t1 - t0[&id]);
    }
    Report {
        rss_before_kb,
        rss_pending_kb,
        fds_before,
        fds_pending,
        sockets,
        burst,
        latency: Stats::of(latencies),
    }
}
