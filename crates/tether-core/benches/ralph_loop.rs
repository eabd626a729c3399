//! Three measurements of the Ralph loop, each over 1,000 iterations (the bars are the README's targets):
//!
//! 1. Loop overhead with an executor that answers instantly: the time between one turn's start
//!    and the next is all the loop's own work (journal transactions, state reads, the cancel
//!    watcher). Bar: < 1 ms median.
//! 2. The same with the real built-in agent and an instant scripted model making one tool call
//!    (`ls`) per iteration: loop plus agent plus tool overhead.
//! 3. Prompt bytes shared with the previous iteration's request, as recorded by the fake model
//!    server over real HTTP (bar: >= 95 %).
//! 4. The loop judge's added latency per iteration: the instant executor's loop with and
//!    without a loop judge on the fake model server over real HTTP (answering at once), over
//!    200 iterations each.
//!
//! Run with `cargo bench -p tether-core --bench ralph_loop`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::future::BoxFuture;
use tether_agent::BuiltinAgent;
use tether_agent::{AgentEvent, ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest};
use tether_config::Api;
use tether_config::{Config, Workspace};
use tether_core::ralph::{self, Deps, RalphEnd, RalphSpec, Stopped};
use tether_human::{Console, Desk};
use tether_model::scripted::{Script, ScriptedModel, Turn};
use tether_store::Journal;
use tether_store::{Event, Seq, Store};
use tether_testkit::model_server::FakeModelServer;
use tether_tools::{ToolOptions, ToolSet};
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

fn spec(max: u32) -> RalphSpec {
    RalphSpec {
        prompt: "Make the tests pass. Read TODO.md first, then work through it.".into(),
        promise: Some("DONE".into()),
        max_iterations: Some(max),
        budget: tether_store::Budget::default(),
        max_consecutive_failures: 3,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn report(label: &str, mut gaps: Vec<f64>) {
    gaps.sort_by(f64::total_cmp);
    let pick = |q: f64| gaps[((gaps.len() - 1) as f64 * q).round() as usize];
    println!(
        "{label}: median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        pick(0.5),
        pick(0.9),
        pick(0.99),
        gaps[gaps.len() - 1]
    );
}

/// The built-in agent with an instant scripted model: whole-run wall time divided by the
/// iterations (the journal's millisecond timestamps are too coarse for per-iteration gaps).
fn builtin_agent_loop() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    std::fs::write(dir.path().join("TODO.md"), "nothing\n").unwrap();
    let script = Script::from_fn(|req| {
        if req.last_tool_result().is_some() {
            Turn::text("looked around")
        } else {
            Turn::tool("ls", serde_json::json!({}))
        }
    });
    let tools = ToolSet::builtin(ws.root(), &ToolOptions::default()).unwrap();
    let agent = BuiltinAgent::new(
        Arc::new(ScriptedModel::new(script)),
        tools,
        "instant".into(),
    );
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let deps = Deps {
        ws: ws.clone(),
        journal: journal.clone(),
        executor: Arc::new(agent),
        human: Desk::from_config(
            &Config::default(),
            &ws,
            journal,
            (Console::Absent, tether_human::registry::Reach::ANYTHING),
        ),
        usage: tether_core::looping::UsageWaits::default(),
        price: None,
        loop_judge: None,
        env_remove: Vec::new(),
        git: tether_git::Confinement::default(),
        isolation: Default::default(),
        bounds: None,
        pool: None,
    };
    let rt = runtime();
    let started = Instant::now();
    let (run, _) = rt
        .block_on(ralph::start(
            &deps,
            spec(ITERATIONS),
            CancellationToken::new(),
            |_| {},
        ))
        .unwrap();
    let total = started.elapsed();
    let events = deps
        .journal
        .store()
        .events(&run, Seq(0), usize::MAX)
        .unwrap();
    let tools = events
        .iter()
        .filter(|e| matches!(e.event, Some(Event::ToolCalled { .. })))
        .count();
    println!(
        "ralph loop, {ITERATIONS} iterations, built-in agent + instant scripted model + one real `ls` tool call each ({tools} tool calls): mean {:.3} ms per iteration",
        total.as_secs_f64() * 1000.0 / f64::from(ITERATIONS)
    );
}

/// Share of each iteration's first request body (as a byte prefix) identical to the previous
/// iteration's, over real HTTP for each wire format.
fn prompt_bytes_shared() {
    const N: u32 = 20;
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let script = Script::from_fn(|req| {
        if req.last_tool_result().is_some() {
            Turn::text("read it; more next time")
        } else {
            Turn::tool("read", serde_json::json!({"path": "TODO.md"}))
        }
    });
    std::fs::write(dir.path().join("TODO.md"), "1. do the thing\n").unwrap();
    let rt = runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let mut shares = Vec::new();
    for api in [Api::OpenAiChat, Api::OpenAiResponses, Api::Anthropic] {
        let endpoint = tether_model::Endpoint::new(api, server.base_url(api), "fake");
        let client = tether_model::connect(endpoint, tether_model::HttpOptions::default()).unwrap();
        let tools = ToolSet::builtin(ws.root(), &ToolOptions::default()).unwrap();
        let agent = BuiltinAgent::new(client, tools, "fake".into());
        let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
        let deps = Deps {
            ws: ws.clone(),
            journal: journal.clone(),
            executor: Arc::new(agent),
            human: Desk::from_config(
                &Config::default(),
                &ws,
                journal,
                (Console::Absent, tether_human::registry::Reach::ANYTHING),
            ),
            usage: tether_core::looping::UsageWaits::default(),
            price: None,
            loop_judge: None,
            env_remove: Vec::new(),
            git: tether_git::Confinement::default(),
            isolation: Default::default(),
            bounds: None,
            pool: None,
        };
        let before = server.request_count();
        rt.block_on(ralph::start(
            &deps,
            spec(N),
            CancellationToken::new(),
            |_| {},
        ))
        .unwrap();
        let bodies: Vec<String> = server.requests()[before..]
            .iter()
            .map(|r| r.raw_body.clone())
            .collect();
        // Each iteration makes two requests (the prompt, then after the tool result); the first
        // of each is what a fresh context sends.
        let firsts: Vec<&String> = bodies.iter().step_by(2).collect();
        let (mut same, mut total) = (0usize, 0usize);
        for w in firsts.windows(2) {
            same += common_prefix(w[0], w[1]);
            total += w[1].len();
        }
        let share = 100.0 * same as f64 / total as f64;
        shares.push(share);
        println!(
            "prompt bytes, {api:?}, {N} iterations: {share:.1} % of each iteration's request identical to the previous iteration's"
        );
    }
    assert!(shares.iter().all(|s| *s >= 95.0));
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let exec = Arc::new(Instant0 {
        starts: Mutex::new(Vec::new()),
    });
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let deps = Deps {
        ws: ws.clone(),
        journal: journal.clone(),
        executor: exec.clone(),
        human: Desk::from_config(
            &Config::default(),
            &ws,
            journal,
            (Console::Absent, tether_human::registry::Reach::ANYTHING),
        ),
        usage: tether_core::looping::UsageWaits::default(),
        price: None,
        loop_judge: None,
        env_remove: Vec::new(),
        git: tether_git::Confinement::default(),
        isolation: Default::default(),
        bounds: None,
        pool: None,
    };
    let spec = spec(ITERATIONS);
    let runtime = runtime();
    let started = Instant::now();
    let (_, end) = runtime
        .block_on(ralph::start(&deps, spec, CancellationToken::new(), |_| {}))
        .unwrap();
    drop(runtime);
    let total = started.elapsed();
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent {
            iteration: ITERATIONS
        })
    );
    let starts = exec.starts.lock().unwrap();
    let gaps: Vec<f64> = starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
        .collect();
    report(
        &format!("ralph loop, {ITERATIONS} iterations, instant executor, per-iteration overhead"),
        gaps,
    );
    println!("  total {:.2} s", total.as_secs_f64());
    builtin_agent_loop();
    prompt_bytes_shared();
    loop_judge_latency();
}

/// The mean iteration time of the instant executor's loop over `n` iterations, with `judge`.
fn mean_iteration_ms(n: u32, judge: Option<tether_core::loop_judge::LoopJudge>) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let exec = Arc::new(Instant0 {
        starts: Mutex::new(Vec::new()),
    });
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let deps = Deps {
        ws: ws.clone(),
        journal: journal.clone(),
        executor: exec.clone(),
        human: Desk::from_config(
            &Config::default(),
            &ws,
            journal,
            (Console::Absent, tether_human::registry::Reach::ANYTHING),
        ),
        usage: tether_core::looping::UsageWaits::default(),
        price: None,
        loop_judge: judge,
        env_remove: Vec::new(),
        git: tether_git::Confinement::default(),
        isolation: Default::default(),
        bounds: None,
        pool: None,
    };
    let rt = runtime();
    rt.block_on(ralph::start(
        &deps,
        spec(n),
        CancellationToken::new(),
        |_| {},
    ))
    .unwrap();
    let starts = exec.starts.lock().unwrap();
    let span = *starts.last().unwrap() - starts[0];
    span.as_secs_f64() * 1000.0 / f64::from(n - 1)
}

/// What a loop judge (over real HTTP, answering at once) adds to each iteration.
fn loop_judge_latency() {
    const N: u32 = 200;
    let rt = runtime();
    let answer = r#"{"verdict": "continue", "reason": "making progress"}"#;
    let server = rt
        .block_on(FakeModelServer::start(Script::from_fn(move |_| {
            Turn::text(answer)
        })))
        .unwrap();
    let endpoint =
        tether_model::Endpoint::new(Api::OpenAiChat, server.base_url(Api::OpenAiChat), "small");
    let client = tether_model::connect(endpoint, tether_model::HttpOptions::default()).unwrap();
    let judge =
        tether_core::loop_judge::LoopJudge::new(client, std::time::Duration::from_secs(10), None);
    let without = mean_iteration_ms(N, None);
    let with = mean_iteration_ms(N, Some(judge));
    assert_eq!(
        server.request_count(),
        N as usize,
        "one reading per iteration"
    );
    println!(
        "loop judge, {N} iterations each, instant executor: {without:.3} ms per iteration without, \
         {with:.3} ms with a loop judge over HTTP (fake server answering at once): +{:.3} ms",
        with - without
    );
}
