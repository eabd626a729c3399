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
//! Then the same plan on many machines (`tether run --parallel 4 --workers` on a throwaway
//! PostgreSQL team store, a bare repository as the shared remote) with 1, 2 and 4 `tether
//! worker` processes: the wall time and speed-up over one worker; per goal, what offering it
//! cost the coordinator (its store write), the git of fetching the worker's branch, of its
//! merge and of pushing the run's branch after it.
//!
//! The bar, checked on every run (exit 1 when missed): the coordinator's median cost per goal,
//! git excluded, stays under 50 ms, on one machine and with workers.
//!
//! Run with `cargo bench -p tether --bench fleet`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
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

/// One run: its wall time in ms, and the log's per-goal figures.
struct Measured {
    wall_ms: f64,
    coordinator: Vec<f64>,
    worktree_git: Vec<f64>,
    fetch_git: Vec<f64>,
    merge_git: Vec<f64>,
    push_git: Vec<f64>,
    recheck: Vec<f64>,
}

/// Where the goals work: on this machine, so many at once, or on so many workers.
#[derive(Clone, Copy)]
enum Mode {
    Here(usize),
    Workers(usize),
}

/// A fresh repository of the plan, configured for the fake servers.
fn repository(root: &Path, servers: &(FakeModelServer, FakeModelServer)) {
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
}

/// `tether worker` number `n` on the team store `db`, in a directory of its own under `home`.
fn worker(db: &str, n: usize, home: &Path) -> Child {
    let dir = home.join(format!("w{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["worker", "--poll", "1", "--dir"])
        .arg(dir.join("work"))
        .current_dir(&dir)
        .env("TETHER_STORE_URL", db)
        .env("TETHER_MACHINE", format!("w{n}"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn once(mode: Mode, servers: &(FakeModelServer, FakeModelServer)) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = dir.path();
    repository(root, servers);
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command
        .current_dir(root)
        .env("XDG_STATE_HOME", state.path())
        .env("NO_COLOR", "1")
        .env("TETHER_LOG", "tether_runtime::compose::fleet=info,warn")
        .stdin(Stdio::null());
    let mut workers = Vec::new();
    let (_db, _remote, _homes);
    match mode {
        Mode::Here(parallel) => {
            command.args(["run", "--parallel", &parallel.to_string(), "--approve"]);
        }
        Mode::Workers(n) => {
            let db = tether_testkit::postgres::database().expect("PostgreSQL (run ./test.sh)");
            let remote = tempfile::tempdir().unwrap();
            let bare = remote.path().join("shared.git");
            common::sh(
                root,
                &format!(
                    "git init -q --bare {b} && git remote add origin {b} && git push -q origin main",
                    b = bare.display()
                ),
            );
            let homes = tempfile::tempdir().unwrap();
            workers = (1..=n)
                .map(|i| worker(&db.url(), i, homes.path()))
                .collect();
            command
                .args(["run", "--parallel", "4", "--workers", "--approve"])
                .env("TETHER_STORE_URL", db.url())
                .env("TETHER_MACHINE", "coordinator");
            (_db, _remote, _homes) = (Some(db), Some(remote), Some(homes));
        }
    }
    let start = Instant::now();
    let out = command.output().unwrap();
    let wall_ms = start.elapsed().as_secs_f64() * 1000.0;
    for mut w in workers {
        let _ = Command::new("kill")
            .args(["-TERM", &w.id().to_string()])
            .status();
        let _ = w.wait();
    }
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
        fetch_git: Vec::new(),
        merge_git: Vec::new(),
        push_git: Vec::new(),
        recheck: Vec::new(),
    };
    for line in stderr.lines() {
        if line.contains("goal started") {
            m.coordinator.extend(field(line, "coordinator_ms"));
            m.worktree_git.extend(field(line, "git_ms"));
        } else if line.contains("goal fetched") {
            m.fetch_git.extend(field(line, "fetch_ms"));
        } else if line.contains("goal merged") {
            m.merge_git.extend(field(line, "git_ms"));
            m.push_git.extend(field(line, "push_ms"));
            m.recheck.extend(field(line, "recheck_ms"));
        }
    }
    assert_eq!(m.coordinator.len(), LAYERS * WIDTH, "{stderr}");
    m
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
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
        let m = once(Mode::Here(parallel), &servers);
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
    println!(
        "\nthe same on many machines: --parallel 4 --workers, a PostgreSQL team store, a bare \
         remote\n\n{:<10} {:>9} {:>9} {:>7} {:>14} {:>10} {:>10} {:>10} {:>10}",
        "workers",
        "wall s",
        "speed-up",
        "ideal",
        "coordinator ms",
        "fetch git",
        "merge git",
        "push git",
        "recheck"
    );
    let mut first = None;
    for workers in [1, 2, 4] {
        let m = once(Mode::Workers(workers), &servers);
        let base = *first.get_or_insert(m.wall_ms);
        let coordinator = median(m.coordinator.clone());
        worst = worst.max(coordinator);
        println!(
            "{workers:<10} {:>9.1} {:>8.2}x {:>6}x {:>14.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            m.wall_ms / 1000.0,
            base / m.wall_ms,
            workers.min(WIDTH),
            coordinator,
            median(m.fetch_git),
            median(m.merge_git),
            median(m.push_git),
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
