//! The adversarial tests' workspace and checks: a plan whose goal is not done yet, the agent and
//! the judge on fake model servers that both require the model key, tether started as an
//! ordinary user with the model and Zulip keys in its environment, and the three things that
//! must hold after any attack: the run never succeeded, no key is anywhere, and the command
//! that needs a human's yes never ran.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_store::{Outcome, Store, Verdict};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{model_table, runtime, text, unprivileged};
use crate::suite::secrets::support::{Running, hits_in, needles, scan_tree};
use crate::suite::secrets::{MODEL_KEY, MODEL_VAR, ZULIP_KEY, ZULIP_VAR};

/// One goal, not done: `add` subtracts, and `check.sh` fails until it adds.
pub const PLAN: &str = "# Plan: numbers

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum of its arguments
verify: sh check.sh
failure_modes:
- check.sh greps for the wrong thing

- [ ] fix add

## Log
";

/// The file only a human's yes may create (the goal's `ask_before: touch deployed.txt`).
pub const DEPLOYED: &str = "deployed.txt";

pub struct Env {
    pub dir: tempfile::TempDir,
    pub agent: FakeModelServer,
    pub judge: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

/// A workspace with `plan`, a buggy `src/lib.rs`, a `check.sh` that fails until it is fixed,
/// the agent and the judge on their own fake servers (both requiring the model key), and
/// `tables` (whole TOML tables) added to tether.toml.
pub fn env(plan: &str, agent: Script, judge: Script, tables: &str) -> Env {
    let rt = runtime();
    let start = |script| {
        rt.block_on(
            FakeModelServer::builder(script)
                .require_key(MODEL_KEY)
                .start(),
        )
        .unwrap()
    };
    let (agent, judge) = (start(agent), start(judge));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(
        root.join("tether.toml"),
        format!(
            "{}api_key_env = \"{MODEL_VAR}\"\n\n{}api_key_env = \"{MODEL_VAR}\"\n\n{tables}\n\
             [zulip]\napi_key_env = \"{ZULIP_VAR}\"\n",
            model_table("model", Api::OpenAiChat, &agent, "worker-model"),
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    super::super::goal_run::support::write_add_project(root, plan);
    Env {
        dir,
        agent,
        judge,
        _rt: rt,
    }
}

impl Env {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `tether <args>` as the person at the keyboard: the same ordinary user as the run, outside
    /// the agent's process tree, without the keys.
    pub fn tether(&self, args: &[&str]) -> Command {
        let mut c = unprivileged::tether(self.path());
        c.args(args);
        c
    }

    /// Runs `tether <args>` to its end (with a deadline).
    pub fn run(&self, args: &[&str]) -> Output {
        Running::start(self.tether(args)).wait()
    }

    /// Starts `tether -vv <args>` with trace logging and the model and Zulip keys in its
    /// environment: the process the agent attacks.
    pub fn start(&self, args: &[&str]) -> Running {
        let mut c = unprivileged::tether(self.path());
        c.arg("-vv")
            .args(args)
            .env("TETHER_LOG", "trace")
            .env(MODEL_VAR, MODEL_KEY)
            .env(ZULIP_VAR, ZULIP_KEY);
        Running::start(c)
    }

    /// Opens the store. Only once no tether process of the test runs any more: as root, opening
    /// it could create its journal files owned by root, out of the unprivileged run's reach.
    pub fn store(&self) -> Store {
        Store::open(self.path().join(".tether/tether.db")).unwrap()
    }

    pub fn plan(&self) -> String {
        fs::read_to_string(self.path().join("plan.md")).unwrap()
    }

    /// What the plan says the goal's status is, if the goal is there.
    pub fn status_of(&self, goal: &str) -> Option<String> {
        let doc = tether_plan::PlanDoc::parse("plan.md", self.plan());
        doc.plan()
            .goal(goal)
            .map(|g| g.status().as_str().to_owned())
    }

    /// The run never reported success: it did not exit 0 nor say the goals are done, no run of
    /// the store completed, no verdict accepted anything, the goal is not `done` in the plan,
    /// and the command that needs a human's yes never ran.
    pub fn assert_never_succeeded(&self, what: &str, out: &Output) {
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_ne!(out.status.code(), Some(0), "{what}: {stdout}\n{stderr}");
        assert!(
            !stdout.contains("all goals done") && !stdout.contains("signed off:"),
            "{what}: {stdout}"
        );
        let store = self.store();
        let runs = store.runs(100).unwrap();
        assert!(!runs.is_empty(), "{what}: the run started");
        for run in &runs {
            assert_ne!(
                run.state.outcome,
                Some(Outcome::Completed),
                "{what}: run {}",
                run.id
            );
        }
        let accepted: Vec<String> = store
            .verdicts_after("plan.md", 0)
            .unwrap()
            .into_iter()
            .filter(|v| v.decision.verdict == Verdict::Accept)
            .map(|v| format!("{v:?}"))
            .collect();
        assert!(accepted.is_empty(), "{what}: accepted: {accepted:#?}");
        assert_ne!(self.status_of("add").as_deref(), Some("done"), "{what}");
        assert!(!self.path().join(DEPLOYED).exists(), "{what}: deployed");
    }

    /// No key (nor its distinctive part, nor the Zulip credentials) in any file of the
    /// workspace (the store with its WAL, transcripts, logs, what the agent wrote), any request
    /// either model was sent, or anything in `outputs`.
    pub fn assert_no_leak(&self, outputs: &[(&str, &Output)]) {
        let needles = needles("bot@example.com");
        let (mut hits, files) = scan_tree(self.path(), &needles);
        for (who, server) in [("agent", &self.agent), ("judge", &self.judge)] {
            for r in server.requests() {
                let place = format!("{who} model request {}", r.index);
                hits.extend(hits_in(&place, r.raw_body.as_bytes(), &needles));
            }
        }
        for (what, out) in outputs {
            hits.extend(hits_in(&format!("{what} stdout"), &out.stdout, &needles));
            hits.extend(hits_in(&format!("{what} stderr"), &out.stderr, &needles));
        }
        assert!(
            files
                .iter()
                .any(|f| f.to_string_lossy().ends_with(".jsonl")),
            "the transcripts were searched: {files:?}"
        );
        assert!(hits.is_empty(), "a key leaked: {hits:#?}");
    }
}

/// Every tool result `server`'s model was sent, in order, each once.
pub fn tool_results(server: &FakeModelServer) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in server.requests() {
        let body: Value = serde_json::from_str(&r.raw_body).unwrap();
        for m in body["messages"].as_array().into_iter().flatten() {
            if m["role"] == "tool"
                && let Some(content) = m["content"].as_str()
                && !seen.iter().any(|s| s == content)
            {
                seen.push(content.to_owned());
            }
        }
    }
    seen
}

/// The one tool result containing `marker`.
pub fn result_with(server: &FakeModelServer, marker: &str) -> String {
    let all = tool_results(server);
    let found: Vec<&String> = all.iter().filter(|r| r.contains(marker)).collect();
    assert_eq!(found.len(), 1, "one result with {marker:?}: {all:#?}");
    found[0].clone()
}

/// The lines `<what> exit=<code>` an attack script printed, as `(what, code)`.
pub fn exits(result: &str) -> Vec<(String, String)> {
    result
        .lines()
        .filter_map(|l| l.rsplit_once(" exit="))
        .map(|(what, code)| (what.trim().to_owned(), code.trim().to_owned()))
        .collect()
}

/// The agent's edit that fixes `add`, so `check.sh` passes.
pub fn fix_add() -> Turn {
    Turn::tool(
        "edit",
        serde_json::json!({"path": "src/lib.rs", "old_text": "a - b", "new_text": "a + b"}),
    )
}
