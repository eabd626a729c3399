//! What the `pi` executor adds to one turn of pi, over running the same program directly.
//!
//! pi itself takes most of a second to start, with run-to-run variation far larger than anything
//! tether adds, so the bench replaces it with a stand-in that answers at once: a shell script that
//! reads the prompt and prints a recorded pi turn (33 JSON lines, an `ask_human` call and its
//! answer). Each sample runs that script once directly (spawn, prompt on stdin, stdout read to
//! the end) and once as a turn of [`PiExecutor`] (the run's pi directory refreshed, the process
//! group, the stream parsed into events, the transcript written). The difference of the medians
//! is tether's own overhead per iteration. Bar: < 50 ms median.
//!
//! Run with `cargo bench -p tether-agent --bench pi_turn`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_agent::{
    Access, AgentEvent, CliSettings, Executor, PiExecutor, TurnObserver, TurnRequest,
};
use tokio_util::sync::CancellationToken;

const SAMPLES: usize = 200;

const STREAM: &str = include_str!("../src/pi/testdata/ask-human.jsonl");

struct Count;

impl TurnObserver for Count {
    fn event(&self, _event: AgentEvent) {}
}

fn stand_in(dir: &Path) -> std::path::PathBuf {
    let stream = dir.join("stream.jsonl");
    std::fs::write(&stream, STREAM).unwrap();
    let path = dir.join("pi");
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 1.5.2; exit 0; }}\n\
         [ \"$1\" = mcp ] && exit 0\ncat >/dev/null\nexec cat {}\n",
        stream.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

fn direct(program: &Path, cwd: &Path) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(["--mode", "json", "-p", "--no-session"])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Pick the cache policy.")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.stdout.len(), STREAM.len());
    start.elapsed()
}

fn median_ms(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() * 99 / 100]),
    )
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let program = stand_in(dir.path());
    let settings = CliSettings {
        program: program.display().to_string(),
        args: Vec::new(),
        env: vec![(
            "PI_CODING_AGENT_DIR".into(),
            dir.path().join("user").display().to_string(),
        )],
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
    let executor = PiExecutor::new(settings, Arc::new(|| Some("r-bench".to_owned())));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let turn = |n: usize| TurnRequest {
        iteration: u32::try_from(n).unwrap(),
        prompt: "Pick the cache policy.".into(),
        transcript: dir
            .path()
            .join(format!(".tether/runs/r-bench/iteration-{n:04}.jsonl")),
        access: Access::Work,
        context: tether_agent::Context::Fresh,
    };
    // The version and MCP checks happen once per run, before the first turn.
    runtime
        .block_on(executor.run_turn(turn(0), &Count, CancellationToken::new()))
        .unwrap();
    let (mut plain, mut through) = (Vec::new(), Vec::new());
    for n in 1..=SAMPLES {
        plain.push(direct(&program, dir.path()));
        let start = Instant::now();
        let outcome = runtime
            .block_on(executor.run_turn(turn(n), &Count, CancellationToken::new()))
            .unwrap();
        through.push(start.elapsed());
        assert_eq!(outcome.tool_calls, 1);
    }
    let (plain_median, plain_p99) = median_ms(plain);
    let (through_median, through_p99) = median_ms(through);
    println!("stand-in run directly: median {plain_median:.2} ms, p99 {plain_p99:.2} ms");
    println!("as a pi executor turn: median {through_median:.2} ms, p99 {through_p99:.2} ms");
    println!(
        "tether's overhead per turn: {:.2} ms median (bar < 50 ms), {SAMPLES} samples",
        through_median - plain_median
    );
}
