//! What the sandbox costs per command: `sh -c true` through the real spawner (`run_shell`, the
//! path of the built-in agent's `bash` and of verify commands), 200 times without a sandbox, 200
//! times in the sandbox without the run's PID namespace (a user and mount namespace with `.git`
//! read-only and `.tether/` hidden, every capability dropped, Landlock, the network-off seccomp
//! filter) and 200 times in the run's sandbox, which also joins the run's PID namespace (and
//! forks once more inside it). Prints the median and p90 of each and the differences of the
//! medians (bar: +1 ms or less for the run's sandbox).
//!
//! Run with `cargo bench -p tether-tools --bench sandbox_spawn`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_sandbox::{Policy, RunNamespace, Sandbox, Support};
use tether_tools::{ShellCommand, run_shell};
use tokio_util::sync::CancellationToken;

const SPAWNS: usize = 200;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let tmp = dir.path().join("tmp");
    for d in [work.join(".git"), work.join(".tether"), tmp.clone()] {
        std::fs::create_dir_all(d).unwrap();
    }
    let policy = Policy::new()
        .write(&work)
        .write(&tmp)
        .read_only(work.join(".git"))
        .hide(work.join(".tether"));
    let sandbox = Sandbox::new(policy, Support::probe()).unwrap().tmpdir(&tmp);
    let run = Arc::new(RunNamespace::start().unwrap());
    let in_run = Arc::new(sandbox.clone().within(run));
    let sandbox = Arc::new(sandbox);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let spec = |sandbox: Option<Arc<Sandbox>>| ShellCommand {
        command: "true".into(),
        cwd: work.clone(),
        timeout: Duration::from_secs(10),
        kill_grace: Duration::from_millis(100),
        output_cap: 1024,
        env_remove: Vec::new(),
        sandbox,
    };
    let plain = measure(&rt, &spec(None));
    let boxed = measure(&rt, &spec(Some(sandbox)));
    let ran = measure(&rt, &spec(Some(in_run)));
    let (pm, p9) = stats(plain);
    let (bm, b9) = stats(boxed);
    let (rm, r9) = stats(ran);
    println!("sandbox_spawn: {SPAWNS} spawns of `sh -c true` each");
    println!("  without sandbox:                 median {pm:.3} ms, p90 {p9:.3} ms");
    println!("  in the sandbox, no PID namespace: median {bm:.3} ms, p90 {b9:.3} ms");
    println!("  in the run's sandbox:            median {rm:.3} ms, p90 {r9:.3} ms");
    println!("  overhead:        {:+.3} ms per spawn (median)", rm - pm);
    println!("  of which the run's PID namespace: {:+.3} ms", rm - bm);
}

fn measure(rt: &tokio::runtime::Runtime, spec: &ShellCommand) -> Vec<f64> {
    let cancel = CancellationToken::new();
    // Warm up (page cache, the runtime's threads).
    for _ in 0..10 {
        rt.block_on(run_shell(spec, &cancel)).unwrap();
    }
    (0..SPAWNS)
        .map(|_| {
            let start = Instant::now();
            let run = rt.block_on(run_shell(spec, &cancel)).unwrap();
            assert_eq!(run.end, tether_tools::ShellEnd::Exited(0), "{}", run.output);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

fn stats(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 9 / 10])
}
