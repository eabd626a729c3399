//! What a run in a worktree of its own costs beside one in the checkout, both in the sandbox:
//! `tether ralph` with a command executor that appends a line to a file (so the loop and the
//! sandbox are all that is measured), one iteration and 21 iterations, each run 7 times in a
//! fresh repository. The difference of the one-iteration runs is the worktree's start (a branch,
//! `git worktree add`, the lock, copying the plan and config in); the difference of the slopes
//! ((t21 - t1) / 20) is its cost per iteration. Medians are printed, never asserted.
//!
//! Run with `cargo bench -p tether --bench worktree`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const REPEATS: usize = 7;

fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Milliseconds one `tether ralph` of `iterations` takes in a fresh repository.
fn once(worktree: bool, iterations: u32) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("tether.toml"),
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo x >> work.txt\"]\n",
    )
    .unwrap();
    sh(
        root,
        "git init -q && printf '.tether/\\n' > .gitignore && git add -A \
         && git -c user.name=a -c user.email=a@b commit -q -m start",
    );
    let max = iterations.to_string();
    let mut args = vec!["ralph", "go", "--max-iterations", &max];
    if worktree {
        args.push("--worktree");
    }
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(&args)
        .current_dir(root)
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ms
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut rows = Vec::new();
    for worktree in [false, true] {
        let one = median((0..REPEATS).map(|_| once(worktree, 1)).collect());
        let many = median((0..REPEATS).map(|_| once(worktree, 21)).collect());
        rows.push((worktree, one, (many - one) / 20.0));
    }
    println!("worktree: tether ralph with a command executor, in the sandbox, median of {REPEATS}");
    for (worktree, one, per) in &rows {
        let place = if *worktree { "worktree" } else { "in place" };
        println!("  {place:9} one-iteration run {one:7.1} ms · per iteration {per:6.2} ms");
    }
    let (_, one_a, per_a) = rows[0];
    let (_, one_b, per_b) = rows[1];
    println!(
        "  the worktree adds {:+.1} ms at start and {:+.2} ms per iteration",
        one_b - one_a,
        per_b - per_a
    );
}
