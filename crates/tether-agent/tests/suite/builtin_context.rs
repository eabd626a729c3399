//! The built-in agent's turns that continue its conversation (`[loop] context = "continue"`):
//! the next turn is the last one's conversation and the shorter prompt, a fresh request starts
//! over, and a failed turn leaves nothing to continue — the next one starts fresh and says why.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tether_agent::{
    AgentEvent, BuiltinAgent, Context, ExecError, Executor, TurnObserver, TurnRequest,
};
use tether_model::scripted::{ScriptedModel, Turn};
use tether_model::{Message, Request};
use tether_testkit::recording_script;
use tether_tools::{ToolOptions, ToolSet};
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
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::FreshContext { reason } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }
}

fn request(dir: &std::path::Path, n: u32, context: Context) -> TurnRequest {
    TurnRequest {
        iteration: n,
        prompt: format!("The whole prompt {n}."),
        transcript: dir.join(format!(".tether/runs/r/iteration-{n:04}.jsonl")),
        access: tether_agent::Access::Work,
        context,
    }
}

/// What each message of a request said, in order (`user: …`, `assistant: …`).
fn said(req: &Request) -> Vec<String> {
    req.messages
        .iter()
        .map(|m| match m {
            Message::System { text } => format!("system: {text}"),
            Message::User { text } => format!("user: {text}"),
            Message::Assistant { text, .. } => format!("assistant: {text}"),
            Message::Tool { content, .. } => format!("tool: {content}"),
        })
        .collect()
}

#[tokio::test]
async fn a_continuing_turn_goes_on_with_the_last_conversation_and_a_fresh_one_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let (script, seen) = recording_script(vec![
        Turn::text("First done."),
        Turn::text("Second done."),
        Turn::text("Third done."),
    ]);
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default()).unwrap();
    let agent = BuiltinAgent::new(Arc::new(ScriptedModel::new(script)), tools, "test".into());
    let events = Events::default();
    let continuing = |n: u32| Context::Continue(format!("What is new {n}."));
    for (n, context) in [(1, continuing(1)), (2, continuing(2)), (3, Context::Fresh)] {
        let req = request(dir.path(), n, context);
        agent
            .run_turn(req, &events, CancellationToken::new())
            .await
            .unwrap();
    }
    let seen = seen.lock().unwrap();
    assert_eq!(
        said(&seen[0]),
        ["user: The whole prompt 1."],
        "nothing to continue yet"
    );
    assert_eq!(
        said(&seen[1]),
        [
            "user: The whole prompt 1.",
            "assistant: First done.",
            "user: What is new 2."
        ]
    );
    assert_eq!(said(&seen[2]), ["user: The whole prompt 3."]);
    assert!(events.fresh_contexts().is_empty(), "nothing to tell");
    let second =
        std::fs::read_to_string(dir.path().join(".tether/runs/r/iteration-0002.jsonl")).unwrap();
    assert!(
        second.contains("continues the conversation of the last turn (2 messages)")
            && second.contains("What is new 2.")
            && !second.contains("First done."),
        "{second}"
    );
}

#[tokio::test]
async fn after_a_failed_turn_the_next_starts_fresh_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // One model call per turn: a tool call leaves the first turn without an answer.
    let (script, seen) = recording_script(vec![
        Turn::tool("read", json!({"path": "missing.txt"})),
        Turn::text("Second done."),
    ]);
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default()).unwrap();
    let agent = BuiltinAgent::new(Arc::new(ScriptedModel::new(script)), tools, "test".into())
        .with_max_steps(1);
    let events = Events::default();
    let first = agent
        .run_turn(
            request(dir.path(), 1, Context::Continue("new 1".into())),
            &events,
            CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(first, Err(ExecError::TooManySteps(1))),
        "{first:?}"
    );
    agent
        .run_turn(
            request(dir.path(), 2, Context::Continue("new 2".into())),
            &events,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        said(&seen.lock().unwrap()[1]),
        ["user: The whole prompt 2."]
    );
    assert_eq!(
        events.fresh_contexts(),
        ["the agent's last turn failed (the agent made 1 model calls without finishing its turn)"]
    );
}
