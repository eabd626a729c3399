//! Shared helpers: temporary stores, a deterministic clock, and child processes that re-run this
//! test binary with one test selected.
//!
//! A "child test" does nothing unless its environment variable is set, and that variable is set
//! only on the child's `Command`, never in this process, so the same binary works as parent and
//! child under both `cargo test` and `cargo nextest`. Waiting on a child is always a channel
//! receive with a deadline, so a stuck child fails the test instead of hanging it.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;
use tether_store::{RunId, RunKind, Store, StoreOptions};

/// How long any single wait on a child may take before the test fails. Generous: it only
/// matters when something hangs.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// A clock that ticks one millisecond per reading, so timestamps differ but stay small.
pub fn tick() -> i64 {
    static NOW: AtomicI64 = AtomicI64::new(1_000);
    NOW.fetch_add(1, Ordering::Relaxed)
}

/// A clock stuck at one instant, for snapshots.
pub fn frozen() -> i64 {
    1_750_000_000_000
}

/// An in-memory store with the ticking clock.
pub fn memory_store() -> Store {
    Store::open_in_memory_with(&StoreOptions {
        clock: tick,
        ..StoreOptions::default()
    })
    .unwrap()
}

/// A temporary directory and the store path inside it (`.tether/tether.db`, not yet created).
pub fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".tether").join("tether.db");
    (dir, path)
}

/// Creates a ralph run with a small spec.
pub fn ralph_run(store: &Store) -> RunId {
    store
        .create_run(
            RunKind::Ralph,
            "/work/repo".as_ref(),
            &json!({ "prompt": "make it pass", "max_iterations": 20 }),
        )
        .unwrap()
}

/// Asserts the run's stored projection equals a fresh fold of its journal.
pub fn assert_projection_matches_journal(store: &Store, run: &RunId) {
    let stored = store.run(run).unwrap();
    let rebuilt = store.rebuild_run_state(run).unwrap();
    assert_eq!(
        stored.state, rebuilt,
        "runs.state differs from the journal fold"
    );
    assert_eq!(stored.status, rebuilt.status);
    assert_eq!(stored.iteration, rebuilt.iteration);
    assert_eq!(stored.last_event_seq, rebuilt.last_event_seq);
    assert_eq!(
        store.iterations(run).unwrap(),
        store.rebuild_iterations(run).unwrap(),
        "iterations rows differ from the journal"
    );
}

/// Reads the value of `key` from the environment, if this process was started as a child.
pub fn child_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// A child process running one test of this binary, with its stdout read line by line on a
/// background thread. Dropping it kills and reaps the child.
pub struct ChildTest {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl ChildTest {
    /// Starts `current_exe --exact <test> --nocapture` with `env` set on the child only.
    pub fn spawn(test: &str, env: &[(&str, &OsStr)]) -> ChildTest {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        ChildTest {
            child,
            stdin,
            lines,
        }
    }

    /// Sends one line to the child's stdin.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads lines until one contains the token `marker`, returning every `tether-seq=<n>`
    /// value seen on the way (including on the marker's line). Fails on timeout or EOF.
    pub fn read_until(&self, marker: &str) -> Vec<i64> {
        let deadline = Instant::now() + CHILD_TIMEOUT;
        let mut seqs = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    seqs.extend(seqs_in(&line));
                    if line.split_whitespace().any(|token| token == marker) {
                        return seqs;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("child did not print {marker} in time"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("child exited before printing {marker}")
                }
            }
        }
    }

    /// Reads `tether-seq=` values until `count` have been seen.
    pub fn read_seqs(&self, count: usize) -> Vec<i64> {
        let deadline = Instant::now() + CHILD_TIMEOUT;
        let mut seqs = Vec::new();
        while seqs.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => seqs.extend(seqs_in(&line)),
                Err(err) => panic!("child stopped reporting after {} seqs: {err}", seqs.len()),
            }
        }
        seqs
    }

    /// Kills the child (SIGKILL on Unix), reaps it, and returns every `tether-seq=` value it
    /// printed that had not been read yet.
    pub fn kill_and_drain(&mut self) -> Vec<i64> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let deadline = Instant::now() + CHILD_TIMEOUT;
        let mut seqs = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => seqs.extend(seqs_in(&line)),
                Err(RecvTimeoutError::Disconnected) => return seqs,
                Err(RecvTimeoutError::Timeout) => panic!("child's stdout did not close"),
            }
        }
    }

    /// Waits for the child to exit (its stdout closes first) and asserts it succeeded.
    pub fn wait_success(mut self) {
        let deadline = Instant::now() + CHILD_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("child did not exit in time"),
            }
        }
        self.stdin = None;
        let status = self.child.wait().unwrap();
        assert!(status.success(), "child failed: {status}");
    }
}

impl Drop for ChildTest {
    fn drop(&mut self) {
        // Best effort: the child may already have exited.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every `tether-seq=<n>` token in a line (the test harness may share the line).
fn seqs_in(line: &str) -> impl Iterator<Item = i64> + '_ {
    line.split_whitespace()
        .filter_map(|token| token.strip_prefix("tether-seq="))
        .map(|n| n.parse().unwrap())
}
