//! A run of many goals (`tether run --parallel N`) at scale: 20 goals in 5 layers of 4, each
//! goal of a layer waiting on every goal of the layer before (`after:`), worked by instant
//! scripted agents (the built-in agent on a fake model server: one command, one file written,
//! signed off; a judge that reads it and accepts), in a fresh repository, with 1, 2 and 4
//! goals at once.
//!
//! Per setting: the whole run's wall time and its speed-up over one at a time (against the
//! ideal: at most 4 goals of a layer can work at once); from the coordinator's log, per goal,
//! what starting it cost beside git (composing its run: the sandbox, the store, the executor),
//! the git of its worktree, the git of its merge, and running the verify of every goal merged
//! so far again after it (which grows with the goals merged).
//!
//! The bar, checked on every run (exit 1 when missed): the coordinator's median cost per goal,
//! git excluded, stays under 50 ms.
//!
//! Run with `cargo bench -p tether --bench fleet`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::{Command, Stdio};
use std::time::Instant;

use tether_config::Api;
use tether_testkit::model_server::FakeModelServer;

#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;

use common::fleet::{agent, judge, own};

const LAYERS: usize = 5;
const WIDTH: usize = 4;
/// The bar: the coordinator's median cost per goal, git excluded.
const BAR_MS: f64 = 50.0;

fn plan() -> String {
    let mut plan = "# Plan: layers\n\n".to_owned();
    for layer in 0..LAYERS {
        for i in 0..WIDTH {
            let id = format!("g{layer}x{i}");
            plan.push_str(&format!(
                "## Goal: {id}\n<!-- id: {id} -->\nstatus: active\n"
            ));
            if layer > 0 {
                let after: Vec<String> =
                    (0..WIDTH).map(|j| format!("g{}x{j}", layer - 1)).collect();
                plan.push_str(&format!("after: {}\n", after.join(", ")));
            }
            plan.push_str(&format!(
                "done_when: TARGET-{id} is written\nverify: test -f {id}.txt\n\n"
            ));
        }
    }
    plan + "## Log\n"
}

fn table(name: &str, server: &FakeModelServer, model: &str) -> String {
    format!(
        "[{name}]\napi = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"{model}\"\n",
        server.base_url(Api::OpenAiChat)
    )
}

/// One run at `parallel`: its wall time in ms, and the log's per-goal figures.
struct Measured {
    wall_ms: f64,
    coordinator: Vec<f64>,
    worktree_git: Vec<f64>,
    merge_git: Vec<f64>,
    recheck: Vec<f64>,
}

fn once(parallel: usize, servers: &(FakeModelServer, FakeModelServer)) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("tether.toml"),
        format!(
            "{}\n{}",
            table("model", &servers.0, "w"),
            table("judge", &servers.1, "j")
        ),
    )
    .unwrap();
    std::fs::write(root.join("plan.md"), plan()).unwrap();
    common::sh(
        root,
        "git init -q -b main && printf '.tether/\\n' > .gitignore && git add -A \
         && git -c user.name=a -c user.email=a@b commit -q -m start",
    );
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["run", "--parallel", &parallel.to_string(), "--approve"])
        .current_dir(root)
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .env("TETHER_LOG", "tether_runtime::compose::fleet=info,warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let wall_ms = start.elapsed().as_secs_f64() * 1000.0;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    let field = |line: &str, name: &str| -> Option<f64> {
        let at = line.find(&format!("{name}="))? + name.len() + 1;
        line[at..].split_whitespace().next()?.parse().ok()
    };
    let mut m = Measured {
        wall_ms,
        coordinator: Vec::new(),
        worktree_git: Vec::new(),
        merge_git: Vec::new(),
        recheck: Vec::new(),
    };
    for line in stderr.lines() {
        if line.contains("goal started") {
            m.coordinator.extend(field(line, "coordinator_ms"));
            m.worktree_git.extend(field(line, "git_ms"));
        } else if line.contains("goal merged") {
            m.merge_git.extend(field(line, "git_ms"));
            m.recheck.extend(field(line, "recheck_ms"));
        }
    }
    assert_eq!(m.coordinator.len(), LAYERS * WIDTH, "{stderr}");
    m
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let servers = (
        rt.block_on(FakeModelServer::start(agent(own))).unwrap(),
        rt.block_on(FakeModelServer::start(judge(own))).unwrap(),
    );
    println!(
        "{} goals in {LAYERS} layers of {WIDTH}, instant agents\n\n{:<10} {:>9} {:>9} {:>7} {:>14} {:>14} {:>12}",
        LAYERS * WIDTH,
        "parallel",
        "wall s",
        "speed-up",
        "ideal",
        "coordinator ms",
        "worktree git",
        "merge git"
    );
    let mut first = None;
    let mut worst: f64 = 0.0;
    for parallel in [1, 2, 4] {
        let m = once(parallel, &servers);
        let base = *first.get_or_insert(m.wall_ms);
        let coordinator = median(m.coordinator.clone());
        worst = worst.max(coordinator);
        println!(
            "{parallel:<10} {:>9.1} {:>8.2}x {:>6}x {:>14.1} {:>14.1} {:>12.1} {:>12.1}",
            m.wall_ms / 1000.0,
            base / m.wall_ms,
            parallel.min(WIDTH),
            coordinator,
            median(m.worktree_git),
            median(m.merge_git),
            median(m.recheck),
        );
    }
    println!("\n(medians per goal; the bar: the coordinator's median under {BAR_MS} ms)");
    if worst >= BAR_MS {
        eprintln!(
            "the coordinator's median cost per goal, {worst:.1} ms, is over the bar of {BAR_MS} ms"
        );
        std::process::exit(1);
    }
}
