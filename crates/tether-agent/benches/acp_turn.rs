//! What the ACP executor adds to one turn of an ACP agent, over driving the same agent process
//! directly.
//!
//! The agent is tether-testkit's scripted ACP agent (it answers at once: one tool call, its
//! completion, a message with the promise, a usage update), started once like the executor
//! starts its agent once per run. Each sample runs one turn directly — `session/new` and
//! `session/prompt` written as JSON lines by hand, the answers read back, notifications skipped —
//! and one as a turn of [`AcpExecutor`] (a fresh session with tether's MCP server in it, the
//! updates folded into events, the final message and usage read). The difference of the medians
//! is tether's own overhead per iteration. Bar: < 50 ms median.
//!
//! Run with `cargo bench -p tether-agent --bench acp_turn`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_agent::acp::RefuseAll;
use tether_agent::{
    Access, AcpExecutor, AgentEvent, CliSettings, Executor, TurnObserver, TurnRequest,
};
use tokio_util::sync::CancellationToken;

const SAMPLES: usize = 200;

struct Quiet;

impl TurnObserver for Quiet {
    fn event(&self, _event: AgentEvent) {}
}

/// The same agent driven by hand.
struct Direct {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Direct {
    fn start(agent: &std::path::Path, cwd: &std::path::Path) -> Self {
        let mut child = Command::new("python3")
            .arg("-u")
            .arg(agent)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut direct = Direct {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            _child: child,
            next: 0,
        };
        direct.call(
            "initialize",
            serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        direct
    }

    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next += 1;
        let id = self.next;
        let line =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        loop {
            let mut reply = String::new();
            self.stdout.read_line(&mut reply).unwrap();
            let value: serde_json::Value = serde_json::from_str(&reply).unwrap();
            if value["id"] == id {
                return value["result"].clone();
            }
        }
    }

    fn turn(&mut self, cwd: &std::path::Path) -> Duration {
        let start = Instant::now();
        let session = self.call(
            "session/new",
            serde_json::json!({"cwd": cwd, "mcpServers": []}),
        )["sessionId"]
            .clone();
        let result = self.call(
            "session/prompt",
            serde_json::json!({"sessionId": session, "prompt": [{"type": "text", "text": "Go."}]}),
        );
        assert_eq!(result["stopReason"], "end_turn");
        start.elapsed()
    }
}

fn median_p99(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() * 99 / 100]),
    )
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent.py");
    std::fs::write(&agent, tether_testkit::SCRIPTED_ACP_AGENT).unwrap();
    std::fs::write(dir.path().join("acp-mode"), "promise").unwrap();
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
    let executor = AcpExecutor::new(
        settings,
        Arc::new(|| Some("r-bench".to_owned())),
        Arc::new(RefuseAll),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let turn = |n: usize| TurnRequest {
        iteration: u32::try_from(n).unwrap(),
        prompt: "Go.".into(),
        transcript: dir.path().join(format!("iteration-{n:04}.jsonl")),
        access: Access::Work,
        context: tether_agent::Context::Fresh,
    };
    // The agent starts once per run, before the first turn; so does the direct one.
    runtime
        .block_on(executor.run_turn(turn(0), &Quiet, CancellationToken::new()))
        .unwrap();
    let mut direct = Direct::start(&agent, dir.path());
    direct.turn(dir.path());
    let (mut plain, mut through) = (Vec::new(), Vec::new());
    for n in 1..=SAMPLES {
        plain.push(direct.turn(dir.path()));
        let start = Instant::now();
        let outcome = runtime
            .block_on(executor.run_turn(turn(n), &Quiet, CancellationToken::new()))
            .unwrap();
        through.push(start.elapsed());
        assert_eq!(outcome.tool_calls, 1);
        assert!(outcome.final_message.contains("<promise>DONE</promise>"));
    }
    let (plain_median, plain_p99) = median_p99(plain);
    let (through_median, through_p99) = median_p99(through);
    println!("agent driven directly: median {plain_median:.2} ms, p99 {plain_p99:.2} ms");
    println!("as an ACP executor turn: median {through_median:.2} ms, p99 {through_p99:.2} ms");
    println!(
        "tether's overhead per turn: {:.2} ms median (bar < 50 ms), {SAMPLES} samples",
        through_median - plain_median
    );
}
