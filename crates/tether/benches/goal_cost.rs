//! Cost per signed-off goal: tether's goal loop against Claude Code's own `/goal`, the same
//! scripted agent on both sides.
//!
//! One task (see `support/goal_task.rs`: a bug fix of eight turns with two premature claims of
//! "done", padded to 20 and 50 turns with turns that read the project's notes) is driven to a
//! signed-off goal by:
//!
//! - tether with its built-in agent;
//! - tether with the real Claude Code as its executor, with a fresh context each iteration and
//!   with `[loop] context = "continue"`;
//! - the real Claude Code's `/goal`, headless (`claude -p "/goal …"`), which asks its evaluator
//!   after every turn.
//!
//! Every model request goes to one scripted fake server (Anthropic's API) and is counted the same
//! way (see `support/tally.rs`): input and output tokens, what a prompt cache would serve and
//! keep, and dollars at a Sonnet-class model's prices. tether's judge and `/goal`'s evaluator are
//! counted apart from the agent and in the totals.
//!
//! The bar, checked on every run (exit 1 when missed): with Claude Code on both sides, tether
//! (`context = "continue"`, the agent's session kept as `/goal` keeps it) costs less per
//! signed-off goal than `/goal` at every length, in tokens and in dollars.
//!
//! Run with `./test.sh` once (it installs Claude Code), then
//! `TETHER_TEST_CLAUDE=target/npm-cli/claude/node_modules/.bin/claude cargo bench -p tether --bench goal_cost`.
//! `GOAL_COST_TURNS=8,20` measures other lengths, `GOAL_COST_LOOPS=fresh,goal` some of the
//! loops (`builtin`, `fresh`, `continue`, `goal`); `GOAL_COST_TETHER=<path>` runs another build
//! of tether (the figures before a change); `GOAL_COST_VERBOSE=1` prints every request's
//! tokens, `GOAL_COST_DUMP=<dir>` writes every request's body.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/goal_task.rs"]
mod goal_task;
#[path = "support/tally.rs"]
mod tally;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use tether_config::Api;
use tether_model::scripted::Script;
use tether_testkit::model_server::{FakeModelServer, RecordedRequest};

use goal_task::{Agent, Progress};
use tally::Tally;

/// The loops measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loop {
    TetherBuiltin,
    TetherClaude { continued: bool },
    ClaudeGoal,
}

impl Loop {
    fn name(self) -> &'static str {
        match self {
            Loop::TetherBuiltin => "tether, built-in agent",
            Loop::TetherClaude { continued: false } => "tether + Claude Code, fresh",
            Loop::TetherClaude { continued: true } => "tether + Claude Code, continue",
            Loop::ClaudeGoal => "Claude Code /goal",
        }
    }

    /// Its name in `GOAL_COST_LOOPS`.
    fn key(self) -> &'static str {
        match self {
            Loop::TetherBuiltin => "builtin",
            Loop::TetherClaude { continued: false } => "fresh",
            Loop::TetherClaude { continued: true } => "continue",
            Loop::ClaudeGoal => "goal",
        }
    }

    fn agent(self) -> Agent {
        match self {
            Loop::TetherBuiltin => Agent::Builtin,
            Loop::TetherClaude { .. } => Agent::ClaudeTether,
            Loop::ClaudeGoal => Agent::ClaudeGoal,
        }
    }
}

const LOOPS: [Loop; 4] = [
    Loop::TetherBuiltin,
    Loop::TetherClaude { continued: false },
    Loop::TetherClaude { continued: true },
    Loop::ClaudeGoal,
];

/// The loop held to the bar: with Claude Code on both sides, it costs less than `/goal`.
const BAR: Loop = Loop::TetherClaude { continued: true };

/// What one loop spent to sign the goal off.
struct Measured {
    agent: Tally,
    /// tether's judge, or `/goal`'s evaluator.
    checker: Tally,
    rereads: usize,
}

impl Measured {
    fn total(&self) -> Tally {
        let mut total = self.agent;
        total.add(&self.checker);
        total
    }
}

fn main() {
    let Some(claude) = std::env::var_os("TETHER_TEST_CLAUDE").map(PathBuf::from) else {
        eprintln!("goal_cost: TETHER_TEST_CLAUDE is not set (./test.sh installs Claude Code)");
        std::process::exit(2);
    };
    let claude = std::fs::canonicalize(claude).unwrap();
    let lengths: Vec<usize> = std::env::var("GOAL_COST_TURNS")
        .unwrap_or_else(|_| "8,20,50".to_owned())
        .split(',')
        .map(|n| n.trim().parse().unwrap())
        .collect();
    let chosen = std::env::var("GOAL_COST_LOOPS").unwrap_or_default();
    let loops: Vec<Loop> = LOOPS
        .into_iter()
        .filter(|l| chosen.is_empty() || chosen.split(',').any(|k| k.trim() == l.key()))
        .collect();
    let mut missed = Vec::new();
    for &turns in &lengths {
        println!("\n{turns} turns");
        println!(
            "{:<32} {:>10} {:>9} {:>10} {:>10} {:>18} {:>9}",
            "loop", "tokens", "dollars", "agent", "cache read", "judge / evaluator", "re-reads"
        );
        let results: Vec<(Loop, Tally)> = loops
            .iter()
            .map(|&l| (l, measure(l, turns, &claude)))
            .map(|(l, m)| (l, print_row(l, &m)))
            .collect();
        let find = |wanted: Loop| results.iter().find(|(l, _)| *l == wanted).map(|(_, t)| *t);
        let Some(goal) = find(Loop::ClaudeGoal) else {
            continue;
        };
        for (l, total) in &results {
            if matches!(l, Loop::TetherClaude { .. }) {
                println!(
                    "  {}: {:.2}x the tokens, {:.2}x the dollars of /goal",
                    l.name(),
                    total.tokens() as f64 / goal.tokens() as f64,
                    total.dollars() / goal.dollars(),
                );
            }
        }
        if let Some(tether) = find(BAR)
            && (tether.tokens() >= goal.tokens() || tether.dollars() >= goal.dollars())
        {
            missed.push(turns);
        }
    }
    if !missed.is_empty() {
        eprintln!(
            "goal_cost: {} did not cost less than /goal at {missed:?} turns",
            BAR.name()
        );
        std::process::exit(1);
    }
}

/// Prints one loop's row and returns its total.
fn print_row(l: Loop, m: &Measured) -> Tally {
    let total = m.total();
    println!(
        "{:<32} {:>10} {:>9.4} {:>10} {:>10} {:>18} {:>9}",
        l.name(),
        total.tokens(),
        total.dollars(),
        m.agent.tokens(),
        total.cache_read,
        format!("{} calls, {}", m.checker.calls, m.checker.tokens()),
        m.rereads,
    );
    total
}

/// Runs `l` on a task of `turns` turns to a signed-off goal and counts what it spent.
fn measure(l: Loop, turns: usize, claude: &Path) -> Measured {
    let rt = common::runtime();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    init_repository(ws);
    goal_task::write_project(ws, turns);
    let progress = Arc::new(Mutex::new(Progress::default()));
    let script = Script::from_fn(goal_task::agent_script(
        l.agent(),
        ws,
        turns,
        Arc::clone(&progress),
    ));
    let agent = rt
        .block_on(FakeModelServer::builder(script).prompt_cache().start())
        .unwrap();
    let judge = Script::from_fn(goal_task::judge_script());
    let judge = rt
        .block_on(FakeModelServer::builder(judge).prompt_cache().start())
        .unwrap();
    match l {
        Loop::ClaudeGoal => run_goal(ws, claude, &agent),
        _ => run_tether(l, ws, claude, &agent, &judge),
    }
    let stats = std::fs::read_to_string(ws.join("stats.py")).unwrap();
    assert!(
        stats.contains(goal_task::EMPTY_CHECK),
        "{}: the work was not done:\n{stats}",
        l.name()
    );
    let progress = progress.lock().unwrap();
    let (agent_tally, mut checker) = count(l, &agent.requests());
    let (judge_tally, _) = count(l, &judge.requests());
    checker.add(&judge_tally);
    Measured {
        agent: agent_tally,
        checker,
        rereads: progress.rereads,
    }
}

/// The agent's requests and the evaluator's, apart.
fn count(l: Loop, requests: &[RecordedRequest]) -> (Tally, Tally) {
    let mut agent = Tally::default();
    let mut evaluator = Tally::default();
    for r in requests {
        let is_evaluator = r
            .body
            .get("system")
            .is_some_and(|s| s.to_string().contains("stop-condition hook"));
        let usage = r.usage.as_ref().expect("every request was answered");
        let one = Tally::from(usage);
        if let Some(dump) = std::env::var_os("GOAL_COST_DUMP") {
            let dir = Path::new(&dump).join(l.name().replace([' ', ',', '/', '+'], "_"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("{:03}.json", r.index)), &r.raw_body).unwrap();
        }
        if std::env::var_os("GOAL_COST_VERBOSE").is_some() {
            let tools = r.body["tools"].as_array().map_or(0, Vec::len);
            let messages = r.body["messages"].as_array().map_or(0, Vec::len);
            eprintln!(
                "  request {:>3}{}: {tools:>2} tools, {messages:>3} messages, {:>6} in, {:>6} read, {:>6} written",
                r.index,
                if is_evaluator { " (evaluator)" } else { "" },
                one.input,
                one.cache_read,
                one.cache_write
            );
        }
        if is_evaluator {
            evaluator.add(&one);
        } else {
            agent.add(&one);
        }
    }
    (agent, evaluator)
}

/// A fresh repository with the project committed, as a person would have it.
fn init_repository(ws: &Path) {
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(ws)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "bench@example.com"]);
    git(&["config", "user.name", "bench"]);
}

/// Claude Code's environment: the fake server, a configuration directory of the workspace's.
fn claude_env(ws: &Path, server: &FakeModelServer) -> Vec<(String, String)> {
    let config = ws.join(".claude-config");
    std::fs::create_dir_all(&config).unwrap();
    [
        ("ANTHROPIC_BASE_URL", server.base_url(Api::Anthropic)),
        ("ANTHROPIC_API_KEY", "sk-fake".to_owned()),
        ("CLAUDE_CONFIG_DIR", config.display().to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// `claude -p "/goal <condition>"`, the way a person runs `/goal` headless; its evaluator may
/// block as many turns as the task has.
fn run_goal(ws: &Path, claude: &Path, server: &FakeModelServer) {
    let out = Command::new(claude)
        .args([
            "-p",
            &format!("/goal {}", goal_task::CONDITION),
            "--verbose",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash,Read,Edit",
        ])
        .envs(claude_env(ws, server))
        .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "1000")
        .current_dir(ws)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = common::text(&out.stdout);
    assert!(
        out.status.success(),
        "/goal failed: {stdout}\n{}",
        common::text(&out.stderr)
    );
    assert!(
        stdout.contains("\"subtype\":\"success\""),
        "/goal did not end in success: {stdout}"
    );
}

/// `tether run` on the plan, signed off by the judge.
fn run_tether(l: Loop, ws: &Path, claude: &Path, agent: &FakeModelServer, judge: &FakeModelServer) {
    std::fs::write(ws.join("plan.md"), goal_task::plan()).unwrap();
    let judge_table = common::model_table("judge", Api::Anthropic, judge, "judge-model");
    let toml = match l {
        Loop::TetherBuiltin => format!(
            "{}{judge_table}",
            common::model_table("model", Api::Anthropic, agent, "worker-model")
        ),
        Loop::TetherClaude { continued } => {
            let env: String = claude_env(ws, agent)
                .iter()
                .map(|(k, v)| format!("{k} = {v:?}\n"))
                .collect();
            let context = if continued {
                "[loop]\ncontext = \"continue\"\n"
            } else {
                ""
            };
            format!(
                "{context}[executor]\nkind = \"claude\"\nprogram = {:?}\nturn_timeout_secs = 600\n\
                 [executor.env]\n{env}{judge_table}",
                claude.display().to_string()
            )
        }
        Loop::ClaudeGoal => unreachable!(),
    };
    std::fs::write(ws.join("tether.toml"), toml).unwrap();
    let mut command = common::cmd(ws, &["run", "--approve", "--max-iterations", "80"]);
    if let Some(other) = std::env::var_os("GOAL_COST_TETHER") {
        // Another build of tether (the figures before a change): same arguments, environment
        // and directory.
        let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
        let envs: Vec<_> = command
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
            .collect();
        command = Command::new(other);
        command.args(args).current_dir(ws).stdin(Stdio::null());
        for (k, v) in envs {
            match v {
                Some(v) => command.env(k, v),
                None => command.env_remove(k),
            };
        }
    }
    let out = command.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}\n{}",
        l.name(),
        common::text(&out.stdout),
        common::text(&out.stderr)
    );
}
