//! How fast an answer reaches a waiting `ask`, and what 1,000 waiting questions cost (the bars are
//! the README's performance targets):
//!
//! 1. CLI path: one question at a time waits in `Broker::ask` (a current-thread runtime, like
//!    `tether ask`); a second OS thread with its own store connection answers it exactly as
//!    `tether answer` does (`human::broker::answer`: the SQLite write, then the poke). Timed from
//!    just before that call to `ask` returning. Bar: p99 < 20 ms.
//! 2. Zulip path: the broker with the Zulip channel against the fake Zulip server on loopback; a
//!    human replies in the topic part-way into a blocked long-poll. Timed from the server storing
//!    the reply to `ask` returning (which includes deregistering the event queue). Also the HTTP
//!    requests per long-poll timeout over ten waits of 50 timeouts each (bar <= 1.05).
//!    Bar: p99 < 20 ms.
//! 3. 1,000 questions pending in one process: VmRSS and open file descriptors before and while
//!    all wait (bar < 64 MB), then a second thread answers all of them back to back; each
//!    question's latency runs from just before its own answer call to its `ask` returning.
//!    Bar: p99 < 100 ms.
//! 4. Slack path: the broker with the Slack channel against the fake Slack on loopback; a human
//!    replies in the thread or presses a button once the socket is up. Timed from just before
//!    the reply to `ask` returning. Also the HTTP requests made while waiting (bar: 0).
//!    Bar: p99 < 20 ms.
//!
//! Run with `cargo bench -p tether-core --bench human`. Exits non-zero when a bar is missed.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

// The broker on the fake Zulip server, shared with the tests.
#[path = "human/cli.rs"]
mod cli;
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "human/pending.rs"]
mod pending;
#[path = "human/slack.rs"]
mod slack;
#[path = "human/zulip.rs"]
mod zulip;

use std::process::ExitCode;
use std::time::Duration;

/// Percentiles of a set of latencies.
pub struct Stats {
    pub n: usize,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Stats {
    pub fn of(mut samples: Vec<Duration>) -> Stats {
        samples.sort();
        let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Stats {
            n: samples.len(),
            p50: pick(0.50),
            p99: pick(0.99),
            max: samples[samples.len() - 1],
        }
    }

    pub fn line(&self) -> String {
        format!(
            "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} questions",
            ms(self.p50),
            ms(self.p99),
            ms(self.max),
            self.n
        )
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A line of /proc/self/status, in kB.
pub fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Open file descriptors of this process.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

fn main() -> ExitCode {
    let mut ok = true;

    let cli = cli::run(cli::QUESTIONS);
    println!("1. answer -> ask returns, cli path: {}", cli.line());
    ok &= cli.p99 < Duration::from_millis(20);

    let z = zulip::run(zulip::QUESTIONS);
    println!(
        "2. reply stored by the Zulip server -> ask returns: {}",
        z.latency.line()
    );
    println!(
        "   while waiting: {} requests in {:.2} s at a {} ms long-poll timeout = {:.3} requests per timeout (bar <= 1.05)",
        z.requests,
        z.waiting.as_secs_f64(),
        zulip::LONGPOLL.as_millis(),
        z.per_timeout
    );
    ok &= z.latency.p99 < Duration::from_millis(20) && z.per_timeout <= 1.05;

    let p = pending::run(pending::QUESTIONS);
    println!(
        "3. {} questions pending in one process: VmRSS {:.1} MB before, {:.1} MB while pending (bar < 64 MB); open fds {} before, {} while pending; notify sockets while pending: {}",
        pending::QUESTIONS,
        p.rss_before_kb as f64 / 1024.0,
        p.rss_pending_kb as f64 / 1024.0,
        p.fds_before,
        p.fds_pending,
        p.sockets,
    );
    println!(
        "   burst-answered from another thread in {:.1} ms; answer -> ask returns: {}",
        ms(p.burst),
        p.latency.line()
    );
    ok &= p.rss_pending_kb < 64 * 1024 && p.latency.p99 < Duration::from_millis(100);

    let s = slack::run(slack::QUESTIONS);
    println!(
        "4. reply (or button) in Slack -> ask returns: {}",
        s.latency.line()
    );
    println!(
        "   while waiting with the socket up: {} HTTP requests over {} waits (bar: 0; naming the responder and marking the question answered, after the answer, excluded)",
        s.requests,
        slack::QUESTIONS
    );
    ok &= s.latency.p99 < Duration::from_millis(20) && s.requests == 0;

    if ok {
        ExitCode::SUCCESS
    } else {
        println!("FAILED: a bar was missed");
        ExitCode::FAILURE
    }
}
