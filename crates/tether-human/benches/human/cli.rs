//! Answer → `ask` returns on the CLI path: the waiter in this process, the answerer on its own
//! OS thread with its own store connection, sharing nothing but the database file and the
//! notification sockets — what `tether answer` in another shell does.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use tether_config::Workspace;
use tether_human::Broker;
use tether_human::broker::answer;
use tether_store::Journal;
use tether_store::NewQuestion;
use tether_store::{QuestionId, Store};
use tokio_util::sync::CancellationToken;

use crate::Stats;

pub const QUESTIONS: usize = 500;

pub fn run(n: usize) -> Stats {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let broker = Broker::new(journal, ws.state_dir(), Vec::new());

    let (ids_tx, ids_rx) = mpsc::channel::<QuestionId>();
    let (t0_tx, t0_rx) = mpsc::channel::<Instant>();
    let (db, state) = (ws.db_path(), ws.state_dir());
    let answerer = std::thread::spawn(move || {
        let store = Store::open(db).unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        for id in ids_rx {
            // Let the waiter settle into its wait, as a human would.
            std::thread::sleep(Duration::from_micros(rng.u64(1_000..3_000)));
            let t0 = Instant::now();
            answer(&store, &state, &id, "yes", "cli", "bench").unwrap();
            t0_tx.send(t0).unwrap();
        }
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut latencies = Vec::with_capacity(n);
    runtime.block_on(async {
        for i in 0..n {
            let ask = NewQuestion {
                question: format!("question {i}?"),
                context: "the bench".into(),
                confidence: Some(10),
                ..NewQuestion::default()
            };
            let got = broker
                .ask_with(ask, CancellationToken::new(), |q| {
                    ids_tx.send(q.id.clone()).unwrap();
                })
                .await
                .unwrap();
            let t1 = Instant::now();
            assert_eq!(got.channel, "cli");
            let t0 = t0_rx.recv().unwrap();
            latencies.push(t1 - t0);
        }
    });
    drop(ids_tx);
    answerer.join().unwrap();
    Stats::of(latencies)
}
