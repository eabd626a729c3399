//! An ACP agent's turns that continue its session (`[loop] context = "continue"`), with
//! tether-testkit's scripted ACP agent: while its process runs, the next turn prompts the same
//! session with the shorter prompt; a new process loads the session when the agent offers
//! `session/load`, and otherwise a new session gets the whole prompt — said once.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tether_agent::acp::RefuseAll;
use tether_agent::{
    Access, AcpExecutor, AgentEvent, CliSettings, Context, Executor, TurnObserver, TurnRequest,
};
use tether_testkit::wait_until_async;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl TurnObserver for Events {
    fn event(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Events {
    fn fresh_contexts(&self) -> Vec<String> {
        let events = self.0.lock().unwrap();
        let fresh = events.iter().filter_map(|e| match e {
            AgentEvent::FreshContext { reason } => Some(reason.clone()),
            _ => None,
        });
        fresh.collect()
    }
}

/// The scripted agent in `dir`, in `mode`, offering `session/load` when `loads`.
fn executor(dir: &Path, mode: &str, loads: bool) -> AcpExecutor {
    let agent = dir.join("agent.py");
    std::fs::write(&agent, tether_testkit::SCRIPTED_ACP_AGENT).unwrap();
    std::fs::write(dir.join("acp-mode"), mode).unwrap();
    let mut env = Vec::new();
    if loads {
        env.push(("ACP_LOAD_SESSION".to_owned(), "1".to_owned()));
    }
    let settings = CliSettings {
        program: "python3".into(),
        args: vec!["-u".into(), agent.display().to_string()],
        env,
        turn_timeout: Duration::from_secs(60),
        workspace: dir.to_owned(),
        tether: "/usr/bin/tether".into(),
        env_remove: Vec::new(),
        mcp_extra: Vec::new(),
        sandbox: None,
        read_only_sandbox: None,
        scratch: None,
        bridge: None,
        config_dir: None,
    };
    AcpExecutor::new(
        settings,
        Arc::new(|| Some("r-1".to_owned())),
        Arc::new(RefuseAll),
    )
}

/// Iteration `n`'s request, continuing with "What is new n."
fn continuing(dir: &Path, n: u32) -> TurnRequest {
    TurnRequest {
        iteration: n,
        prompt: format!("The whole prompt {n}."),
        transcript: dir.join(format!("iteration-{n:04}.jsonl")),
        access: Access::Work,
        context: Context::Continue(format!("What is new {n}.")),
    }
}

/// Each prompt the agent got: its session and its text.
fn prompted(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("acp-prompted.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["session"].as_str().unwrap().into(),
                v["text"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// Waits until the agent process that wrote `acp-agent.pid` has exited.
async fn agent_gone(dir: &Path) {
    let pid = std::fs::read_to_string(dir.join("acp-agent.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    wait_until_async("the agent process to exit", Duration::from_secs(20), || {
        let gone = std::fs::read_to_string(&stat).map_or(true, |s| s.contains(") Z "));
        gone.then_some(())
    })
    .await
    .unwrap();
}

async fn turns(exec: &AcpExecutor, dir: &Path, events: &Events, n: u32, quits: bool) {
    for i in 1..=n {
        let out = exec
            .run_turn(continuing(dir, i), events, CancellationToken::new())
            .await
            .unwrap();
        assert!(out.final_message.contains("DONE"), "{out:?}");
        if quits {
            agent_gone(dir).await;
        }
    }
}

#[tokio::test]
async fn while_the_agent_runs_the_next_turn_prompts_the_same_session() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), "promise", false);
    let events = Events::default();
    turns(&exec, dir.path(), &events, 2, false).await;
    let prompts = prompted(dir.path());
    assert_eq!(prompts.len(), 2);
    assert_eq!(prompts[0].1, "The whole prompt 1.");
    assert_eq!(
        prompts[1],
        (prompts[0].0.clone(), "What is new 2.".to_owned())
    );
    let opened = std::fs::read_to_string(dir.path().join("acp-sessions.jsonl")).unwrap();
    assert_eq!(opened.lines().count(), 1, "one session/new");
    assert!(events.fresh_contexts().is_empty());
}

#[tokio::test]
async fn a_new_process_loads_the_session_when_the_agent_offers_it() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), "quit", true);
    let events = Events::default();
    turns(&exec, dir.path(), &events, 2, true).await;
    let prompts = prompted(dir.path());
    assert_eq!(
        prompts[1],
        (prompts[0].0.clone(), "What is new 2.".to_owned())
    );
    let loads = std::fs::read_to_string(dir.path().join("acp-loads.txt")).unwrap();
    assert_eq!(loads.trim(), prompts[0].0);
    assert!(events.fresh_contexts().is_empty());
}

#[tokio::test]
async fn without_session_load_a_new_process_starts_fresh_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), "quit", false);
    let events = Events::default();
    turns(&exec, dir.path(), &events, 3, true).await;
    let prompts = prompted(dir.path());
    let texts: Vec<&str> = prompts.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "The whole prompt 1.",
            "The whole prompt 2.",
            "The whole prompt 3."
        ]
    );
    let said = events.fresh_contexts();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("does not offer session/load"), "{said:?}");
}

#[tokio::test]
async fn a_session_the_new_process_cannot_load_gives_way_to_a_new_one_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), "quit", true);
    let events = Events::default();
    turns(&exec, dir.path(), &events, 1, true).await;
    // The agent no longer knows the session.
    std::fs::remove_file(dir.path().join("acp-session-ids.txt")).unwrap();
    turns(&exec, dir.path(), &events, 1, true).await;
    let prompts = prompted(dir.path());
    assert_ne!(prompts[1].0, prompts[0].0);
    assert_eq!(prompts[1].1, "The whole prompt 1.");
    let said = events.fresh_contexts();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("could not load its session") && said[0].contains("no such session"),
        "{said:?}"
    );
}
