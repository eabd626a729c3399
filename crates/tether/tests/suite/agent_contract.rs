//! The contract every agent CLI keeps, one suite run for each the tests drive — Claude Code,
//! Codex and pi, the ACP adapters of Claude Code and Codex,
//! Gemini CLI and Copilot CLI —
//! against the fake model server:
//! a Ralph loop keeps its promise and its usage reaches the run; `ask_human` over MCP is
//! answered with `tether answer`; `tether cancel` leaves none of its processes behind.
//!
//! An agent joins with an [`AgentCli`] (how a workspace runs it) and one `agent_contract!` line
//! in its own file, where what is its own stays: what its request and transcript show, its
//! resume, its usage limits. Its sign-off is [`signs_off_through_complete_goal`], given the tool
//! its model writes a file with; its gate [`ask_before_holds_a_command`], and
//! [`planted_settings_do_not_loosen_ask_before`] given what the agent would write into its
//! settings.

use std::path::Path;

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::Event;
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use tether_config::Api;

use crate::common::agents::{
    LIB, PLAN, accepting_judge, diagnose, events, processes_in, ralph, start, status, tool_calls,
};
use crate::common::{PATIENCE, model_table, pending_question, run, text, wait_output};

/// An agent CLI as the contract drives it.
pub(crate) trait AgentCli {
    /// A workspace whose tether.toml runs it on `server`.
    fn workspace(server: &FakeModelServer) -> AgentWorkspace;

    /// Whether its turn reports the tokens it used (false only where the agent sends none).
    const REPORTS_USAGE: bool = true;

    /// Whether it names tether's tools in the calls it reports, so a run records `ask_human`
    /// with its summary (false where the agent reports a call only by a title of its own).
    const NAMES_TOOL_CALLS: bool = true;

    /// What its kept promise shows beyond the contract (its first request, its transcript).
    fn kept_promise(_dir: &Path, _server: &FakeModelServer) {}
}

/// A workspace, and what the agent's configuration needs beside it (its own home), kept for the
/// test's length.
pub(crate) struct AgentWorkspace {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) _beside: Option<tempfile::TempDir>,
}

impl AgentWorkspace {
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

pub(crate) fn keeps_its_promise_and_reports_its_usage<A: AgentCli>() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("All written. <promise>DONE</promise>")
    }));
    let ws = A::workspace(&server);
    let done = wait_output(ralph(ws.path(), "Write the notes."));
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(ws.path(), &done)
    );
    assert_eq!(status(ws.path())["status"], "completed");
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.raw_body.contains("Write the notes.")),
        "the prompt reached the model"
    );
    let usage: Vec<u64> = events(ws.path())
        .into_iter()
        .filter_map(|e| match e {
            Event::IterationUsage { input_tokens, .. } => Some(input_tokens),
            _ => None,
        })
        .collect();
    if A::REPORTS_USAGE {
        assert!(usage.len() == 1 && usage[0] > 0, "{usage:?}");
    }
    A::kept_promise(ws.path(), &server);
}

pub(crate) fn ask_human_over_mcp_is_answered_with_tether_answer<A: AgentCli>() {
    let (_rt, server) = start(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool(
                "mcp__tether__ask_human",
                json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
            ),
            Some((_, result)) => Turn::text(format!("Noted ({result}). <promise>DONE</promise>")),
        }
    }));
    let ws = A::workspace(&server);
    let child = ralph(ws.path(), "Pick the logo colour.");
    let q = pending_question(ws.path());
    assert_eq!(q["question"], "Which colour?");
    assert_eq!(q["run_id"], status(ws.path())["id"]);
    let id = q["id"].as_str().unwrap();
    let out = run(ws.path(), &["answer", id, "Blue.", "--as", "carol"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(ws.path(), &done)
    );
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(last.contains("Human replied: Blue."), "{last}");
    assert_eq!(status(ws.path())["status"], "completed");
    // The tool call is one of the run's events, with its one-line summary.
    let calls = tool_calls(ws.path());
    if A::NAMES_TOOL_CALLS {
        let asked = ("ask_human".to_owned(), "ask_human Which colour?".to_owned());
        assert_eq!(calls, [asked]);
    } else {
        assert_eq!(calls.len(), 1, "{calls:?}");
    }
}

pub(crate) fn tether_cancel_leaves_no_process_behind<A: AgentCli>() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::tool(
            "mcp__tether__ask_human",
            json!({"question": "Wait for me?", "context": "cancel test", "confidence": 10}),
        )
    }));
    let ws = A::workspace(&server);
    let child = ralph(ws.path(), "Ask and wait.");
    pending_question(ws.path());
    let before = wait_until("the agent to run", PATIENCE, || {
        let pids = processes_in(ws.path());
        (!pids.is_empty()).then_some(pids)
    })
    .unwrap();
    let out = run(ws.path(), &["cancel"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(
        done.status.code(),
        Some(130),
        "{}",
        diagnose(ws.path(), &done)
    );
    wait_until("the agent and its MCP server to be gone", PATIENCE, || {
        processes_in(ws.path()).is_empty().then_some(())
    })
    .unwrap_or_else(|e| panic!("{e}; were {before:?}"));
    assert_eq!(status(ws.path())["status"], "cancelled");
}

/// The contract's tests for `$agent`, in a module `$name`.
/// A goal signed off through `complete_goal` over MCP, as every agent CLI does it: its model
/// writes `src/lib.rs` with the agent's own tool `tool` (its arguments `write` makes, given the
/// workspace), then calls `complete_goal`; tether runs the goal's verify, and the judge reads the
/// file and accepts. `configure` writes the workspace's tether.toml for the agent on a server,
/// with the lines given added (the judge's table). What is the agent's own to check stays with
/// it, on what this returns.
pub(crate) fn signs_off_through_complete_goal(
    tool: &'static str,
    write: fn(&Path) -> serde_json::Value,
    configure: &dyn Fn(&Path, &FakeModelServer, &str),
) -> SignedOff {
    let dir = tempfile::tempdir().unwrap();
    let arguments = write(dir.path());
    let (rt, agent) = start(Script::from_fn(move |req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool(tool, arguments.clone()),
            Some((Some(name), _)) if name == tool => Turn::tool(
                "mcp__tether__complete_goal",
                json!({"id": "add", "evidence": "grep finds a + b", "paths": ["src/lib.rs"]}),
            ),
            Some((_, result)) => Turn::text(format!("Signed off: {result}")),
        }
    }));
    let judge = accepting_judge(&rt);
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    configure(
        dir.path(),
        &agent,
        &model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
    );
    let out = run(dir.path(), &["run", "--approve", "--max-iterations", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    assert!(
        text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap(),
        LIB
    );
    let plan = std::fs::read_to_string(dir.path().join("plan.md")).unwrap();
    assert!(plan.contains("add signed off:"), "{plan}");
    assert_eq!(
        judge.request_count(),
        2,
        "the judge read the file, then accepted"
    );
    SignedOff {
        dir,
        _servers: (agent, judge),
        _rt: rt,
    }
}

/// A person's answer to an `[human] ask_before` question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Approve,
    Reject,
}

/// `[human] ask_before` holds for an agent's own commands: its model runs `touch <marker>` with
/// the agent's shell tool (the call `shell` makes of the command), a command `ask_before` names;
/// the run asks a person and nothing runs until the answer; "Approve" lets it run, "Reject"
/// does not, and the refusal reaches the model (as the tool's result, or — for an agent that
/// ends its turn on a refusal — in the next iteration's prompt). `configure` writes the
/// workspace's tether.toml for the agent on a server, with the lines given added.
pub(crate) fn ask_before_holds_a_command(
    shell: fn(String) -> Turn,
    answer: Answer,
    configure: &dyn Fn(&Path, &FakeModelServer, &str),
) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("touch {}", marker.display());
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        let told = req
            .last_user_text()
            .is_some_and(|t| t.contains("tether refused"));
        match req.last_tool_result() {
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
            None if told => Turn::text("Told it was refused. <promise>DONE</promise>"),
            None => shell(command.clone()),
        }
    }));
    configure(dir.path(), &server, "[human]\nask_before = [\"touch\"]\n");
    let child = ralph(dir.path(), "Run the probe.");
    let question = pending_question(dir.path());
    assert!(
        question["question"].as_str().unwrap().contains("touch"),
        "{question}"
    );
    assert!(!marker.exists(), "held until answered");
    let id = question["id"].as_str().unwrap();
    let said = format!("{answer:?}");
    let out = run(dir.path(), &["answer", id, &said, "--as", "ana"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &done)
    );
    match answer {
        Answer::Approve => assert!(marker.exists(), "the approved command did not run"),
        Answer::Reject => {
            assert!(!marker.exists(), "a rejected command ran");
            // The last request says more of a refusal than the first did.
            let requests = server.requests();
            let refusals = |body: &str| {
                let body = body.to_lowercase();
                [
                    "refused",
                    "reject",
                    "denied",
                    "declined",
                    "canceled",
                    "cancelled",
                ]
                .iter()
                .map(|w| body.matches(w).count())
                .sum::<usize>()
            };
            let (first, last) = (
                &requests[0].raw_body,
                &requests[requests.len() - 1].raw_body,
            );
            assert!(
                refusals(last) > refusals(first),
                "the refusal never reached the model: {last}"
            );
        }
    }
}

/// Settings the agent writes never loosen `[human] ask_before`, in the run that wrote them or a
/// later one: in the first iteration its model runs `plant` with the agent's shell tool, a
/// command that writes the agent CLI's settings wherever the agent can reach them (the workspace, the run's copy of its
/// configuration directory), each letting commands run unasked. In the next iteration, and
/// again in a second run (the CLI started afresh, reading what the workspace now holds), its
/// model runs `touch <ran>`, which `ask_before` names: each time a person is asked, and the
/// rejected command never runs.
pub(crate) fn planted_settings_do_not_loosen_ask_before(
    shell: fn(String) -> Turn,
    plant: &str,
    configure: &dyn Fn(&Path, &FakeModelServer, &str),
) {
    use std::sync::atomic::{AtomicBool, Ordering};

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let command = format!("touch {}", marker.display());
    let planting = plant.to_owned();
    let planted = std::sync::Arc::new(AtomicBool::new(false));
    let seen = planted.clone();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| {
        let told = req
            .last_user_text()
            .is_some_and(|t| t.contains("tether refused"));
        match req.last_tool_result() {
            Some(_) if !seen.swap(true, Ordering::SeqCst) => Turn::text("Planted; next time."),
            Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
            None if told => Turn::text("Told it was refused. <promise>DONE</promise>"),
            None if seen.load(Ordering::SeqCst) => shell(command.clone()),
            None => shell(planting.clone()),
        }
    }));
    configure(dir.path(), &server, "[human]\nask_before = [\"touch\"]\n");
    for run_number in 1..=2 {
        let child = ralph(dir.path(), "Run the probe.");
        let question = pending_question(dir.path());
        assert!(planted.load(Ordering::SeqCst), "the planting never ran");
        assert!(
            question["question"].as_str().unwrap().contains("touch"),
            "run {run_number}: {question}"
        );
        assert!(!marker.exists(), "held until answered");
        let id = question["id"].as_str().unwrap();
        let out = run(dir.path(), &["answer", id, "Reject", "--as", "ana"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let done = wait_output(child);
        assert_eq!(
            done.status.code(),
            Some(0),
            "run {run_number}: {}",
            diagnose(dir.path(), &done)
        );
        assert!(!marker.exists(), "run {run_number}: a rejected command ran");
    }
}

/// A workspace whose goal was signed off, with what served it kept alive.
pub(crate) struct SignedOff {
    pub(crate) dir: tempfile::TempDir,
    _servers: (FakeModelServer, FakeModelServer),
    _rt: tokio::runtime::Runtime,
}

macro_rules! agent_contract {
    ($name:ident, $agent:ident) => {
        mod $name {
            use crate::suite::agent_contract as contract;

            #[test]
            fn keeps_its_promise_and_reports_its_usage() {
                contract::keeps_its_promise_and_reports_its_usage::<super::$agent>();
            }

            #[test]
            fn ask_human_over_mcp_is_answered_with_tether_answer() {
                contract::ask_human_over_mcp_is_answered_with_tether_answer::<super::$agent>();
            }

            #[test]
            fn tether_cancel_leaves_no_process_behind() {
                contract::tether_cancel_leaves_no_process_behind::<super::$agent>();
            }
        }
    };
}
pub(crate) use agent_contract;
