//! From a person's answer to an ACP agent's permission request to the decision reaching the
//! agent: the path `tether answer` takes (the answer stored, the waiting broker poked), the
//! broker's wake-up, the permission desk mapping the answer to the agent's option, and the
//! executor's JSON-RPC response, read by tether-testkit's scripted ACP agent, which notes when
//! it received it. Bar: p99 < 50 ms.
//!
//! Run with `cargo bench -p tether-core --bench acp_permission`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tether_agent::{
    Access, AcpExecutor, AgentEvent, CliSettings, Executor, TurnObserver, TurnRequest,
};
use tether_core::ask_before::AskBeforeGate;
use tether_core::permissions::DeskPermissions;
use tether_human::asking::AskPolicy;
use tether_human::{Broker, Desk};
use tether_store::{Journal, RunCell, Store};
use tokio_util::sync::CancellationToken;

const SAMPLES: usize = 100;

struct Quiet;

impl TurnObserver for Quiet {
    fn event(&self, _event: AgentEvent) {}
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".tether");
    std::fs::create_dir_all(&state).unwrap();
    let agent = dir.path().join("agent.py");
    std::fs::write(&agent, tether_testkit::SCRIPTED_ACP_AGENT).unwrap();
    std::fs::write(dir.path().join("acp-mode"), "permission").unwrap();
    let db = state.join("tether.db");
    let journal = Journal::new(Store::open(&db).unwrap(), Vec::new()).unwrap();
    let broker = Broker::new(journal, state.clone(), Vec::new());
    let desk = Desk::new(broker, AskPolicy::default());
    let gate = AskBeforeGate::new(
        desk,
        vec!["git push".into()],
        dir.path().join("plan.md"),
        RunCell::default(),
    );
    let permissions = Arc::new(DeskPermissions::new(
        gate,
        tether_config::Permissions::AskBefore,
    ));
    let settings = CliSettings {
        program: "python3".into(),
        args: vec!["-u".into(), agent.display().to_string()],
        env: Vec::new(),
        turn_timeout: Duration::from_secs(60),
        workspace: dir.path().to_owned(),
        tether: "/usr/bin/tether".into(),
        env_remove: Vec::new(),
        mcp_extra: Vec::new(),
        sandbox: None,
        read_only_sandbox: None,
        scratch: None,
        bridge: None,
        config_dir: None,
    };
    let executor = Arc::new(AcpExecutor::new(settings, Arc::new(|| None), permissions));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answerer = Store::open(&db).unwrap();
    let decided_at = dir.path().join("acp-decided-at.txt");
    let mut samples = Vec::new();
    for n in 0..=SAMPLES {
        let exec = executor.clone();
        let transcript = dir.path().join(format!("iteration-{n:04}.jsonl"));
        let turn = runtime.spawn(async move {
            let request = TurnRequest {
                iteration: u32::try_from(n).unwrap(),
                prompt: "Push it.".into(),
                transcript,
                access: Access::Work,
                context: tether_agent::Context::Fresh,
            };
            exec.run_turn(request, &Quiet, CancellationToken::new())
                .await
        });
        let question = tether_testkit::wait_until("the question", Duration::from_secs(30), || {
            answerer.pending_questions().unwrap().into_iter().next()
        })
        .unwrap();
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        tether_human::broker::answer(&answerer, &state, &question.id, "Allow", "cli", "bench")
            .unwrap();
        runtime.block_on(turn).unwrap().unwrap();
        let received: f64 = std::fs::read_to_string(&decided_at)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .parse()
            .unwrap();
        if n > 0 {
            samples.push(Duration::from_secs_f64((received - at).max(0.0)));
        }
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "answer stored -> decision received by the agent: median {:.2} ms, p99 {:.2} ms, max {:.2} ms ({SAMPLES} answers; bar p99 < 50 ms)",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() * 99 / 100]),
        ms(samples[samples.len() - 1]),
    );
}
