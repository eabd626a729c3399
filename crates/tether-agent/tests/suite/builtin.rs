//! The built-in agent's turn: model calls and tool executions until a final answer, with every
//! model mistake going back to the model instead of ending the turn — and a tool's fatal failure
//! ending it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::stream;
use serde_json::{Value, json};
use tether_agent::{AgentEvent, BuiltinAgent, ExecError, Executor, TurnObserver, TurnRequest};
use tether_model::scripted::{Script, ScriptedModel, Turn};
use tether_model::{
    EventStream, Message, ModelClient, Request, StopReason, StreamEvent, ToolCall, Usage,
};
use tether_testkit::recording_script;
use tether_tools::{FatalToolError, Tool, ToolContext, ToolOptions, ToolOutput, ToolSet, ToolSpec};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl TurnObserver for Events {
    fn event(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

fn agent(dir: &std::path::Path, model: Arc<dyn ModelClient>) -> BuiltinAgent {
    let tools = ToolSet::builtin(dir, &ToolOptions::default()).unwrap();
    BuiltinAgent::new(model, tools, "test".into())
}

fn request(dir: &std::path::Path) -> TurnRequest {
    TurnRequest {
        iteration: 1,
        prompt: "Do the task.".into(),
        transcript: dir.join(".tether/runs/r/iteration-0001.jsonl"),
        access: tether_agent::Access::Work,
        context: tether_agent::Context::Fresh,
    }
}

fn last_tool_message(req: &Request) -> (String, bool) {
    match req.messages.last().unwrap() {
        Message::Tool {
            content, is_error, ..
        } => (content.clone(), *is_error),
        other => panic!("expected a tool result, got {other:?}"),
    }
}

#[tokio::test]
async fn a_turn_runs_tools_until_a_final_answer_and_writes_a_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let (script, seen) = recording_script(vec![
        Turn::tool("write", json!({"path": "a.txt", "content": "hi\n"})),
        Turn::tool("read", json!({"path": "a.txt"})).with_text("checking"),
        Turn::text("Wrote and checked a.txt."),
    ]);
    let agent = agent(dir.path(), Arc::new(ScriptedModel::new(script)));
    let events = Events::default();
    let out = agent
        .run_turn(request(dir.path()), &events, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.final_message, "Wrote and checked a.txt.");
    assert_eq!(out.tool_calls, 2);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "hi\n"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[0].messages.len(),
        1,
        "a fresh conversation: just the prompt"
    );
    assert!(seen[0].system.is_some() && !seen[0].tools.is_empty());
    assert!(!last_tool_message(&seen[2]).1);
    let tool_events: Vec<_> = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { summary, .. } => Some(summary.clone()),
            AgentEvent::ModelCall { .. }
            | AgentEvent::Permission { .. }
            | AgentEvent::FreshContext { .. } => None,
        })
        .collect();
    assert_eq!(tool_events.len(), 2);
    assert!(tool_events[0].starts_with("write a.txt"), "{tool_events:?}");
    let transcript =
        std::fs::read_to_string(dir.path().join(".tether/runs/r/iteration-0001.jsonl")).unwrap();
    let roles: Vec<String> = transcript
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["role"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
}

#[tokio::test]
async fn an_unknown_tool_and_an_escaping_path_go_back_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let escape = format!("{}/x.txt", outside.path().display());
    let (script, seen) = recording_script(vec![
        Turn::tool("writ", json!({"path": "a.txt"})),
        Turn::tool("write", json!({"path": escape, "content": "no"})),
        Turn::tool("write", json!({"path": "../escape.txt", "content": "no"})),
        Turn::text("gave up"),
    ]);
    let agent = agent(dir.path(), Arc::new(ScriptedModel::new(script)));
    let out = agent
        .run_turn(
            request(dir.path()),
            &Events::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.final_message, "gave up");
    let seen = seen.lock().unwrap();
    let (unknown, err) = last_tool_message(&seen[1]);
    assert!(err && unknown.contains("unknown tool `writ`"), "{unknown}");
    for req in &seen[2..4] {
        let (msg, err) = last_tool_message(req);
        assert!(err && msg.contains("outside the workspace"), "{msg}");
    }
    assert!(!outside.path().join("x.txt").exists());
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
}

/// A model that sends one tool call with arguments that are not JSON, then a final answer.
#[derive(Debug, Default)]
struct Garbled(Mutex<Vec<Request>>);

impl ModelClient for Garbled {
    fn stream(&self, request: &Request, _cancel: CancellationToken) -> EventStream {
        let mut seen = self.0.lock().unwrap();
        seen.push(request.clone());
        let events = if seen.len() == 1 {
            vec![
                StreamEvent::ToolCallFinished {
                    index: 0,
                    call: ToolCall::from_raw("c1", "write", "{\"path\": \"a.txt\", "),
                },
                StreamEvent::Usage(Usage::default()),
                StreamEvent::Done {
                    stop_reason: StopReason::ToolUse,
                },
            ]
        } else {
            vec![
                StreamEvent::TextDelta("ok".into()),
                StreamEvent::Usage(Usage::default()),
                StreamEvent::Done {
                    stop_reason: StopReason::EndTurn,
                },
            ]
        };
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }
}

#[tokio::test]
async fn malformed_tool_arguments_are_an_error_result_and_the_turn_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(Garbled::default());
    let agent = agent(dir.path(), model.clone());
    let out = agent
        .run_turn(
            request(dir.path()),
            &Events::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.final_message, "ok");
    let seen = model.0.lock().unwrap();
    let (msg, err) = last_tool_message(&seen[1]);
    assert!(err && msg.contains("not valid JSON"), "{msg}");
}

#[tokio::test]
async fn a_turn_that_never_ends_hits_the_step_limit() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::turns([]).then_repeat(Turn::tool("ls", json!({})));
    let agent = agent(dir.path(), Arc::new(ScriptedModel::new(script))).with_max_steps(3);
    let err = agent
        .run_turn(
            request(dir.path()),
            &Events::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::TooManySteps(3)), "{err:?}");
}

#[tokio::test]
async fn cancelling_mid_turn_stops_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::turns([Turn::text("too late")]);
    let model = ScriptedModel::new(script).with_delay(Duration::from_secs(600));
    let agent = agent(dir.path(), Arc::new(model));
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let events = Events::default();
    let (result, ()) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(
            agent.run_turn(request(dir.path()), &events, cancel),
            async move { c.cancel() }
        )
    })
    .await
    .unwrap();
    assert!(matches!(result, Err(ExecError::Cancelled)), "{result:?}");
}

/// A tool whose store is gone, like `complete_goal` when the database fails.
struct Broken {
    spec: ToolSpec,
}

impl Tool for Broken {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        _args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async { Err(FatalToolError::new("complete_goal", "the store is gone")) })
    }
}

#[tokio::test]
async fn a_fatal_tool_failure_ends_the_turn_with_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let (script, seen) = recording_script(vec![
        Turn::tool("complete_goal", json!({})),
        Turn::text("should not be asked"),
    ]);
    let spec = ToolSpec::object("complete_goal", "Sign a goal off.", json!({}), &[]);
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default())
        .unwrap()
        .with(Arc::new(Broken { spec }))
        .unwrap();
    let agent = BuiltinAgent::new(Arc::new(ScriptedModel::new(script)), tools, "test".into());
    let events = Events::default();
    let req = request(dir.path());
    let transcript = req.transcript.clone();
    let err = agent
        .run_turn(req, &events, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Tool(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "tool `complete_goal` failed: the store is gone"
    );
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the model is not called again"
    );
    assert!(
        !events
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolCall { .. })),
        "a call that ended the turn is not reported as a tool call"
    );
    let log = std::fs::read_to_string(transcript).unwrap();
    let last = log.lines().last().unwrap();
    assert_eq!(
        last,
        r#"{"role":"error","text":"tool `complete_goal` failed: the store is gone"}"#
    );
}

/// A tool stuck in a blocking call that ignores cancellation (as a blocking read of a FIFO
/// would be).
struct Stuck {
    spec: ToolSpec,
    started: tokio::sync::mpsc::UnboundedSender<()>,
}

impl Tool for Stuck {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        _args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        let _ = self.started.send(());
        Box::pin(futures_util::future::pending())
    }
}

#[tokio::test]
async fn cancelling_ends_the_turn_even_while_a_tool_is_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let (script, _seen) = recording_script(vec![
        Turn::tool("stuck", json!({})),
        Turn::text("should not be asked"),
    ]);
    let (started, mut on_start) = tokio::sync::mpsc::unbounded_channel();
    let spec = ToolSpec::object("stuck", "Never returns.", json!({}), &[]);
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default())
        .unwrap()
        .with(Arc::new(Stuck { spec, started }))
        .unwrap();
    let agent = BuiltinAgent::new(Arc::new(ScriptedModel::new(script)), tools, "test".into());
    let events = Events::default();
    let cancel = CancellationToken::new();
    let turn = agent.run_turn(request(dir.path()), &events, cancel.clone());
    let cancel_once_stuck = async {
        on_start.recv().await;
        cancel.cancel();
        std::future::pending::<()>().await
    };
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::select! {
            ended = turn => ended,
            () = cancel_once_stuck => unreachable!(),
        }
    })
    .await
    .expect("the cancelled turn ends without waiting for the stuck tool");
    assert!(matches!(ended, Err(ExecError::Cancelled)), "{ended:?}");
}
