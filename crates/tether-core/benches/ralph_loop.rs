//! Loop overhead per iteration: a Ralph loop of 1,000 iterations whose executor answers
//! instantly, so the time between one turn's start and the next is all the loop's own work
//! (journal transactions, state reads, the cancel watcher). Reports the median and p99.
//!
//! Bar (PRODUCT section 8): < 1 ms median. Run with `cargo bench -p tether-core --bench ralph_loop`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tether_agent::{
    AgentEvent, BoxFuture, ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest,
};
use tether_core::Workspace;
use tether_core::journal::Journal;
use tether_core::ralph::{self, Deps, RalphEnd, RalphSpec};
use tether_store::Store;
use tokio_util::sync::CancellationToken;

const ITERATIONS: u32 = 1000;

struct Instant0 {
    starts: Mutex<Vec<Instant>>,
}

impl Executor for Instant0 {
    fn describe(&self) -> String {
        "instant".into()
    }
    fn run_turn<'a>(
        &'a self,
        request: TurnRequest,
        observer: &'a dyn TurnObserver,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>> {
        Box::pin(async move {
            self.starts.lock().unwrap().push(Instant::now());
            observer.event(AgentEvent::ToolCall {
                tool: "edit".into(),
                summary: format!("edit src/file-{}.rs", request.iteration),
                is_error: false,
            });
            Ok(TurnOutcome {
                final_message: "working on it".into(),
                tool_calls: 1,
                ..TurnOutcome::default()
            })
        })
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let exec = Arc::new(Instant0 {
        starts: Mutex::new(Vec::new()),
    });
    let deps = Deps {
        ws: ws.clone(),
        journal: Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap(),
        executor: exec.clone(),
    };
    let spec = RalphSpec {
        prompt: "Make the tests pass.".into(),
        promise: Some("DONE".into()),
        max_iterations: Some(ITERATIONS),
        max_consecutive_failures: 3,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let (_, end) = runtime
        .block_on(ralph::start(&deps, spec, CancellationToken::new(), |_| {}))
        .unwrap();
    let total = started.elapsed();
    assert_eq!(
        end,
        RalphEnd::BudgetSpent {
            iteration: ITERATIONS
        }
    );
    let starts = exec.starts.lock().unwrap();
    let mut gaps: Vec<f64> = starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
        .collect();
    gaps.sort_by(f64::total_cmp);
    let pick = |q: f64| gaps[((gaps.len() - 1) as f64 * q).round() as usize];
    println!(
        "ralph loop, {ITERATIONS} iterations, instant executor: per-iteration overhead median \
         {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms; total {:.2} s",
        pick(0.5),
        pick(0.9),
        pick(0.99),
        gaps[gaps.len() - 1],
        total.as_secs_f64()
    );
}
