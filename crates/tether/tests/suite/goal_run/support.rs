//! The workspace, the two fake model servers (the agent's and the judge's) and the process
//! helpers the `tether run` tests share.

use std::fs;
use std::path::Path;
use std::process::{Child, Output};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_store::{Seq, Store, VerdictRecord};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::{self, PATIENCE, model_table, runtime};

pub const PLAN: &str = "# Plan: numbers

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum of its arguments
verify: sh check.sh
failure_modes:
- check.sh greps for the wrong thing
- the function is right but never called

- [ ] fix add

## Log
";

/// A second goal, for runs that must sign off two.
pub const SECOND_GOAL: &str = "## Goal: Double numbers
<!-- id: double -->
status: active
done_when: `double` returns twice its argument
verify: grep -qF 'x * 2' src/lib.rs
failure_modes:
- double adds instead of multiplying
- verify passes on a comment

- [ ] write double

";

pub struct Env {
    pub dir: tempfile::TempDir,
    pub agent: FakeModelServer,
    pub judge: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

/// A workspace with `plan`, a buggy `src/lib.rs`, a `check.sh` that fails until it is fixed,
/// the agent and the judge on their own fake servers, and `extra` appended to tether.toml.
pub fn env(plan: &str, agent: Script, judge: Script, extra: &str) -> Env {
    let rt = runtime();
    let agent = rt.block_on(FakeModelServer::start(agent)).unwrap();
    let judge = rt.block_on(FakeModelServer::start(judge)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(
        root.join("tether.toml"),
        format!(
            "{}\n{}{extra}",
            model_table("model", Api::OpenAiChat, &agent, "worker-model"),
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    write_add_project(root, plan);
    Env {
        dir,
        agent,
        judge,
        _rt: rt,
    }
}

/// The project every goal-loop test works on: `plan`, an `add` that subtracts, and a `check.sh`
/// that fails until it adds.
pub fn write_add_project(root: &Path, plan: &str) {
    fs::write(root.join("plan.md"), plan).unwrap();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(
        root.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    fs::write(
        root.join("check.sh"),
        "if grep -q 'a + b' src/lib.rs; then echo 'check ok'; else echo 'add does not add'; exit 1; fi\n",
    )
    .unwrap();
}

impl Env {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn run(&self, args: &[&str]) -> Output {
        common::run(self.path(), args)
    }

    pub fn spawn(&self, args: &[&str]) -> Child {
        common::spawn(self.path(), args)
    }

    pub fn store(&self) -> Store {
        Store::open(self.path().join(".tether/tether.db")).unwrap()
    }

    pub fn plan(&self) -> String {
        fs::read_to_string(self.path().join("plan.md")).unwrap()
    }

    pub fn status_of(&self, goal: &str) -> String {
        let doc = tether_plan::PlanDoc::parse("plan.md", self.plan());
        doc.plan().goal(goal).unwrap().status().as_str().to_owned()
    }

    pub fn verdicts(&self, goal: &str) -> Vec<VerdictRecord> {
        self.store().verdicts_for_goal("plan.md", goal).unwrap()
    }

    /// The `rule` of every `rule_fired` event of the latest run.
    pub fn rules(&self) -> Vec<String> {
        let store = self.store();
        let run = store.latest_run().unwrap().unwrap();
        store
            .events(&run.id, Seq(0), usize::MAX)
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.event {
                Some(tether_store::Event::RuleFired { rule, .. }) => Some(rule.to_string()),
                _ => None,
            })
            .collect()
    }

    /// Waits (up to [`PATIENCE`]) until `cond` holds of the store.
    pub fn wait_for(&self, what: &str, cond: impl Fn(&Store) -> bool) {
        let db = self.path().join(".tether/tether.db");
        wait_until(what, PATIENCE, || {
            (db.exists() && cond(&self.store())).then_some(())
        })
        .unwrap();
    }
}

/// The agent's edit that fixes `add`.
pub fn fix_add() -> Turn {
    Turn::tool(
        "edit",
        json!({"path": "src/lib.rs", "old_text": "a - b", "new_text": "a + b"}),
    )
}

/// The agent's call of `complete_goal` for `goal`.
pub fn complete(goal: &str) -> Turn {
    Turn::tool(
        "complete_goal",
        json!({"id": goal, "evidence": "sh check.sh prints: check ok", "paths": ["src/lib.rs"]}),
    )
}

/// A touch of a new file (a real change that leaves the plan alone).
pub fn touch(name: &str) -> Turn {
    Turn::tool("write", json!({"path": name, "content": "x\n"}))
}

/// The judge's final message: a verdict as a fenced JSON block.
pub fn verdict(verdict: &str, path: &str, quote: &str, missing: &[&str]) -> Turn {
    let v: Value = json!({
        "verdict": verdict,
        "summary": format!("{verdict}ed after reading {path}"),
        "checks": [{"path": path, "quote": quote, "observation": "the function adds"}],
        "missing": missing,
    });
    Turn::text(format!("I read the file.\n```json\n{v}\n```"))
}

/// A judge that reads `src/lib.rs` and accepts, quoting a real line.
pub fn accepting_judge() -> Vec<Turn> {
    vec![
        Turn::tool("read", json!({"path": "src/lib.rs"})),
        verdict(
            "accept",
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b",
            &[],
        ),
    ]
}
