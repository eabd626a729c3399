//! A workspace with an approved goal, and judges to test with.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tether_config::Workspace;
use tether_model::scripted::{Script, ScriptedModel, Turn};
use tether_plan::file as plan_file;
use tether_signoff::{Judge, Signoff, SignoffOutcome};
use tether_store::Journal;
use tether_store::{Store, VerdictRecord};
use tokio_util::sync::CancellationToken;

pub const PLAN: &str = "# Plan: demo

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `add` returns the sum and a test checks it
verify: sh check.sh
failure_modes:
- the test asserts nothing

- [x] write add

## Goal: Later
<!-- id: later -->
status: open
done_when: someday

## Log
- 2026-01-01 00:00 started
";

pub const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

pub struct Fx {
    _dir: tempfile::TempDir,
    pub ws: Workspace,
    pub journal: Journal,
    /// The workspace as a run began, once [`Fx::begin`] took it.
    began: std::sync::Mutex<Option<tether_git::Start>>,
}

impl Fx {
    /// A workspace (`ws/` inside a temporary directory, with `outside.txt` next to it) holding
    /// the plan, `src/lib.rs` and a passing `check.sh`; goal `add` approved.
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(dir.path().join("outside.txt"), "pub fn add\n").unwrap();
        fs::write(root.join("plan.md"), PLAN).unwrap();
        fs::write(root.join("src/lib.rs"), LIB).unwrap();
        fs::write(
            root.join("check.sh"),
            "grep -q 'a + b' src/lib.rs && echo 'check ok'\n",
        )
        .unwrap();
        let ws = Workspace::at(&root);
        let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
        let fx = Fx {
            _dir: dir,
            ws,
            journal,
            began: std::sync::Mutex::new(None),
        };
        fx.approve("add");
        fx
    }

    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    pub fn approve(&self, id: &str) {
        let doc = plan_file::read(&self.root().join("plan.md")).unwrap();
        let hash = doc.plan().goal(id).unwrap().contract_hash();
        self.journal
            .store()
            .approve_contract("plan.md", id, &hash, "alice")
            .unwrap();
    }

    pub fn write(&self, path: &str, text: &str) {
        fs::write(self.root().join(path), text).unwrap();
    }

    pub fn read(&self, path: &str) -> String {
        fs::read_to_string(self.root().join(path)).unwrap()
    }

    /// Snapshots the workspace as a run would when it begins: what the sign-offs after compare
    /// with.
    pub async fn begin(&self) {
        let snaps = tether_git::Snapshots::open(
            &self.ws.state_dir(),
            self.root(),
            tether_git::Confinement::Sandboxed,
            &[],
        )
        .unwrap();
        let snapshot = snaps.snapshot(&CancellationToken::new()).await.unwrap();
        let start = tether_git::Start::Taken(tether_git::StartTree::of(&snapshot));
        *self.began.lock().unwrap() = Some(start);
    }

    pub fn signoff(&self, judge: Option<Judge>) -> Signoff {
        let signoff =
            Signoff::new(self.ws.clone(), self.journal.clone(), "plan.md").with_judge(judge);
        match self.began.lock().unwrap().clone() {
            Some(start) => signoff.since(start),
            None => signoff,
        }
    }

    pub async fn complete(&self, judge: Option<Judge>) -> SignoffOutcome {
        self.complete_by(self.signoff(judge)).await
    }

    /// Goal `add` signed off (or not) by the judges of `panel`.
    pub async fn complete_with(&self, panel: tether_signoff::Panel) -> SignoffOutcome {
        self.complete_by(self.signoff(None).with_panel(Some(panel)))
            .await
    }

    async fn complete_by(&self, signoff: Signoff) -> SignoffOutcome {
        signoff
            .complete(
                "add",
                "add returns a + b; check.sh passes",
                &["src/lib.rs".to_owned()],
                &CancellationToken::new(),
            )
            .await
            .unwrap()
    }

    pub fn verdicts(&self) -> Vec<VerdictRecord> {
        self.journal
            .store()
            .verdicts_for_goal("plan.md", "add")
            .unwrap()
    }

    pub fn status(&self, id: &str) -> String {
        let doc = plan_file::read(&self.root().join("plan.md")).unwrap();
        doc.plan().goal(id).unwrap().status().to_string()
    }

    pub fn last_log(&self) -> String {
        let doc = plan_file::read(&self.root().join("plan.md")).unwrap();
        doc.plan()
            .log
            .as_ref()
            .unwrap()
            .entries
            .last()
            .unwrap()
            .text
            .clone()
    }
}

/// A scripted judge (the script is shared, so `script.served()` counts its model calls).
pub fn scripted(script: &Script) -> Judge {
    scripted_as(script, "judge-model")
}

/// A scripted judge on the model `name`.
pub fn scripted_as(script: &Script, name: &str) -> Judge {
    Judge::new(
        Arc::new(ScriptedModel::new(script.clone())),
        name,
        Duration::from_secs(30),
    )
}

/// The verdict JSON as a judge would end its message.
pub fn verdict(verdict: &str, checks: serde_json::Value, missing: &[&str]) -> Turn {
    let body = json!({"verdict": verdict, "summary": format!("judged: {verdict}"),
                      "checks": checks, "missing": missing});
    Turn::text(format!("I read the code.\n\n```json\n{body:#}\n```\n"))
}

pub fn check(path: &str, quote: &str) -> serde_json::Value {
    json!({"path": path, "quote": quote, "observation": "seen"})
}

/// The transcript's lines as JSON.
pub fn transcript(root: &Path, relative: &str) -> Vec<serde_json::Value> {
    fs::read_to_string(root.join(relative))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
