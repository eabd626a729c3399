//! `tether mcp` costs, measured on the release binary: start → `initialize` answered (median
//! and p99 over many spawns; bar < 30 ms), memory while an `ask_human` waits (VmRSS and VmHWM
//! from /proc; bar < 15 MB), and CPU time used while waiting 5 s (≈ 0) — with the store and
//! CLI channel alone, and with Zulip (the fake server on loopback) as well.
//!
//! Run with `cargo bench -p tether --bench mcp`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// The tests' runner and MCP client; the bench uses a part of them.
#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tether_testkit::zulip_server::FakeZulipServer;

const SPAWNS: usize = 200;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let init = common::run(dir.path(), &["init"]);
    assert!(init.status.success());
    startup(dir.path());
    waiting(dir.path(), "store and CLI", |_| {});

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let with_zulip = tempfile::tempdir().unwrap();
    std::fs::write(
        with_zulip.path().join("tether.toml"),
        "[human]\nchannels = [\"cli\", \"zulip\"]\n",
    )
    .unwrap();
    waiting(
        with_zulip.path(),
        "store, CLI and Zulip (fake server)",
        |c| {
            c.env("ZULIP_SERVER_URL", zulip.server_url())
                .env("ZULIP_BOT_EMAIL", zulip.bot_email())
                .env("ZULIP_BOT_API_KEY", zulip.api_key())
                .env("ZULIP_STREAM", zulip.stream());
        },
    );
}

/// Spawn to `initialize` answered, `SPAWNS` times.
fn startup(dir: &Path) {
    for _ in 0..5 {
        start_once(dir); // warm the page cache
    }
    let mut times: Vec<Duration> = (0..SPAWNS).map(|_| start_once(dir)).collect();
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "tether mcp start -> initialize answered ({SPAWNS} spawns): median {:.2} ms, p99 {:.2} ms, \
         min {:.2} ms, max {:.2} ms (bar < 30 ms)",
        ms(at(0.5)),
        ms(at(0.99)),
        ms(times[0]),
        ms(times[times.len() - 1]),
    );
}

fn start_once(dir: &Path) -> Duration {
    let started = Instant::now();
    let mut child = common::cmd(dir, &["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INITIALIZE}").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let took = started.elapsed();
    assert!(line.contains("\"serverInfo\""), "{line}");
    drop(stdin);
    child.wait().unwrap();
    took
}

/// Memory and CPU of a server waiting on a question, offered on `channels`.
fn waiting(dir: &Path, channels: &str, setup: impl FnOnce(&mut Command)) {
    let mut server = common::mcp::Server::start(dir, &[], setup);
    server.initialize();
    let id = server.call_tool(
        "ask_human",
        json!({"question": "Benchmark?", "context": "", "confidence": 0}),
        Some("bench"),
    );
    let q = common::pending_question(dir);
    let pid = server.pid();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].trim().to_owned())
            .unwrap_or_default()
    };
    println!(
        "tether mcp waiting on a question ({channels}): VmRSS {} (anonymous {}, file-backed {}), \
         VmHWM {}, threads {} (bar < 15 MB)",
        field("VmRSS:"),
        field("RssAnon:"),
        field("RssFile:"),
        field("VmHWM:"),
        field("Threads:"),
    );
    let before = cpu(pid);
    let wall = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let used = cpu(pid) - before;
    println!(
        "tether mcp CPU time while waiting {:.1} s ({channels}): {:.2} ms ({:.4} % of one core)",
        wall.elapsed().as_secs_f64(),
        used as f64 / 1e6,
        used as f64 / wall.elapsed().as_nanos() as f64 * 100.0,
    );
    common::run(dir, &["answer", q["id"].as_str().unwrap(), "done"]);
    server.response(id);
    server.close();
}

/// CPU time of every thread of `pid` so far, in nanoseconds (from /proc/<pid>/task/*/schedstat).
fn cpu(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
