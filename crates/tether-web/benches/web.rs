//! The dashboard's costs against the real server on loopback (the bars are the README's):
//!
//! 1. event appended (by another store connection, as a loop in another process does) →
//!    received by an SSE client of `/api/runs/{id}/events`: p50/p99 over 500 events, one at a
//!    time. Bar: p99 < 50 ms.
//! 2. answer posted to `/api/questions/{id}/answer` (as the page's form does) → the waiting
//!    `Broker::ask` returns, 200 questions. Bar: p99 < 50 ms.
//! 3. 100 concurrent SSE clients of `/api/events`, 200 events appended: every client gets every
//!    event, in order. Bar: 0 lost.
//! 4. time to the first byte of the runs page over a store of 1,000 runs, and of a run page
//!    whose run has 100,000 events (the page shows the newest 500): p50/p99 of 50 requests,
//!    then criterion's estimate. Bar: < 200 ms.
//!
//! Run with `cargo bench -p tether-web --bench web`. Exits non-zero when a bar is missed.

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
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Web;
use criterion::Criterion;
use serde_json::json;
use tether_human::Broker;
use tether_store::{Event, Journal, NewQuestion, RunKind, Store};
use tokio_util::sync::CancellationToken;

struct Stats {
    p50: Duration,
    p99: Duration,
    max: Duration,
    n: usize,
}

impl Stats {
    fn of(mut s: Vec<Duration>) -> Stats {
        s.sort();
        let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        Stats {
            p50: pick(0.5),
            p99: pick(0.99),
            max: s[s.len() - 1],
            n: s.len(),
        }
    }

    fn line(&self) -> String {
        format!(
            "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (n = {})",
            ms(self.p50),
            ms(self.p99),
            ms(self.max),
            self.n
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn tool(store: &Store, run: &tether_store::RunId, i: u32) {
    store
        .append(
            Some(run),
            &Event::ToolCalled {
                n: 1,
                tool: "ls".into(),
                summary: format!("call {i}"),
            },
        )
        .unwrap();
}

fn event_to_client() -> Stats {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(RunKind::Ralph, web.ws.root(), &json!({"prompt": "p"}))
        .unwrap();
    let mut sse = web.sse(&format!("/api/runs/{run}/events"), &[]);
    sse.next(Duration::from_secs(5)).unwrap();
    let mut samples = Vec::new();
    for i in 0..500 {
        tool(&store, &run, i);
        let t0 = Instant::now();
        sse.next(Duration::from_secs(5)).expect("the event");
        samples.push(t0.elapsed());
    }
    Stats::of(samples)
}

fn answer_to_ask() -> Stats {
    let web = Web::start();
    let journal = Journal::new(Store::open(web.ws.db_path()).unwrap(), Vec::new()).unwrap();
    let broker = Arc::new(Broker::new(journal, web.ws.state_dir(), Vec::new()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = web.store();
    let mut samples = Vec::new();
    for i in 0..200 {
        let b = Arc::clone(&broker);
        let (tx, rx) = std::sync::mpsc::channel();
        let asker = std::thread::scope(|scope| {
            let rt = &rt;
            let h = scope.spawn(move || {
                rt.block_on(async {
                    let q = NewQuestion {
                        question: format!("q {i}"),
                        ..NewQuestion::default()
                    };
                    let a = b.ask(q, CancellationToken::new()).await.unwrap();
                    tx.send(Instant::now()).unwrap();
                    a
                })
            });
            let id = tether_testkit::wait_until("pending", Duration::from_secs(5), || {
                store
                    .pending_questions()
                    .unwrap()
                    .first()
                    .map(|q| q.id.clone())
            })
            .unwrap();
            let t0 = Instant::now();
            let r = web.post_json(
                &format!("/api/questions/{id}/answer"),
                &json!({"text": "yes"}),
            );
            assert_eq!(r.status, 200);
            let done = rx.recv_timeout(Duration::from_secs(5)).unwrap();
            samples.push(done.saturating_duration_since(t0));
            h.join().unwrap()
        });
        assert_eq!(asker.channel, "web");
    }
    Stats::of(samples)
}

fn many_clients() -> (usize, usize, Duration) {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(RunKind::Ralph, web.ws.root(), &json!({"prompt": "p"}))
        .unwrap();
    let after = store.last_seq().unwrap().0;
    let mut clients: Vec<_> = (0..100)
        .map(|_| web.sse(&format!("/api/events?after={after}"), &[]))
        .collect();
    let t0 = Instant::now();
    for i in 0..200 {
        tool(&store, &run, i);
    }
    let mut lost = 0;
    for c in &mut clients {
        let mut want = 0;
        while want < 200 {
            match c.next(Duration::from_secs(10)) {
                Some(m) => {
                    let v: serde_json::Value = serde_json::from_str(&m.data).unwrap();
                    assert_eq!(
                        v["event"]["summary"],
                        format!("call {want}"),
                        "out of order"
                    );
                    want += 1;
                }
                None => {
                    lost += 200 - want;
                    break;
                }
            }
        }
    }
    (clients.len(), lost, t0.elapsed())
}

/// A workspace with 1,000 runs and one run of 100,000 events.
fn big_store() -> (Web, tether_store::RunId) {
    let web = Web::start();
    let store = web.store();
    for i in 0..1000 {
        let run = store
            .create_run(
                RunKind::Ralph,
                web.ws.root(),
                &json!({"prompt": format!("run {i}"), "max_iterations": 20}),
            )
            .unwrap();
        store
            .append_all(
                Some(&run),
                &[
                    Event::IterationStarted { n: 1 },
                    Event::ToolCalled {
                        n: 1,
                        tool: "ls".into(),
                        summary: "ls .".into(),
                    },
                    Event::IterationCompleted {
                        n: 1,
                        summary: "did a thing".into(),
                    },
                ],
            )
            .unwrap();
    }
    let big = store
        .create_run(RunKind::Ralph, web.ws.root(), &json!({"prompt": "long"}))
        .unwrap();
    for chunk in 0..100u32 {
        let events: Vec<Event> = (0..1000u32)
            .map(|i| Event::ToolCalled {
                n: chunk + 1,
                tool: "bash".into(),
                summary: format!("bash: step {}", chunk * 1000 + i),
            })
            .collect();
        store.append_all(Some(&big), &events).unwrap();
    }
    (web, big)
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

fn main() -> ExitCode {
    let mut ok = true;
    let mut bar = |what: &str, good: bool, line: String| {
        println!("{what}: {line} — {}", if good { "ok" } else { "MISSED" });
        ok &= good;
    };

    let s = event_to_client();
    bar(
        "event appended → SSE client",
        s.p99 < Duration::from_millis(50),
        s.line(),
    );
    let s = answer_to_ask();
    bar(
        "answer posted → ask returns",
        s.p99 < Duration::from_millis(50),
        s.line(),
    );
    let (n, lost, took) = many_clients();
    bar(
        "concurrent SSE clients",
        lost == 0,
        format!(
            "{n} clients × 200 events, {lost} lost, all delivered in {:.0} ms",
            ms(took)
        ),
    );

    let (web, big) = big_store();
    let run_page = format!("/runs/{big}");
    for (what, path) in [
        ("runs page, 1,000 runs", "/"),
        ("run page, 100,000 events", run_page.as_str()),
    ] {
        let s = Stats::of((0..50).map(|_| first_byte(&web, path)).collect());
        bar(
            &format!("first byte, {what}"),
            s.p99 < Duration::from_millis(200),
            s.line(),
        );
    }
    let mut c = Criterion::default().configure_from_args().sample_size(20);
    c.bench_function("first byte: runs page, 1,000 runs", |b| {
        b.iter(|| first_byte(&web, "/"))
    });
    c.bench_function("first byte: run page, 100,000 events", |b| {
        b.iter(|| first_byte(&web, &run_page))
    });
    c.final_summary();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
