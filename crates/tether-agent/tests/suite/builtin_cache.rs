//! The built-in agent's requests as a provider's prompt cache sees them: every call of a turn
//! begins with the same bytes as the one before, so each call reads the conversation so far
//! from the cache, and the next iteration's first call reads the whole of the last one's.

use std::sync::Arc;

use serde_json::{Value, json};
use tether_agent::{AgentEvent, BuiltinAgent, Executor, TurnObserver, TurnOutcome, TurnRequest};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{Endpoint, HttpModel, HttpOptions};
use tether_testkit::FakeModelServer;
use tether_tools::{ToolOptions, ToolSet};
use tokio_util::sync::CancellationToken;

struct Quiet;

impl TurnObserver for Quiet {
    fn event(&self, _: AgentEvent) {}
}

/// A loop's prompt: a long fixed part (framing and plan), the same every iteration.
fn prompt() -> String {
    "Work toward the goals in plan.md; the plan says what is done. ".repeat(80)
}

async fn turn(agent: &BuiltinAgent, dir: &std::path::Path, iteration: u32) -> TurnOutcome {
    let request = TurnRequest {
        iteration,
        prompt: prompt(),
        transcript: dir.join(format!(".tether/runs/r/iteration-{iteration:04}.jsonl")),
        access: tether_agent::Access::Work,
        context: tether_agent::Context::Fresh,
    };
    agent
        .run_turn(request, &Quiet, CancellationToken::new())
        .await
        .unwrap()
}

/// A body with its cache marks taken out: the bytes a cache compares.
fn unmarked(body: &Value) -> Value {
    match body {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "cache_control")
                .map(|(key, value)| (key.clone(), unmarked(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

/// Runs two iterations (three calls, then one) against a server playing `api`'s cache.
async fn two_iterations(api: Api) -> (TurnOutcome, TurnOutcome, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::turns([
        Turn::tool("write", json!({"path": "a.txt", "content": "hi\n"})),
        Turn::tool("read", json!({"path": "a.txt"})),
        Turn::text("Wrote a.txt."),
        Turn::text("Nothing left to do."),
    ]);
    let server = FakeModelServer::builder(script)
        .prompt_cache()
        .start()
        .await
        .unwrap();
    let endpoint = Endpoint::new(api, server.base_url(api), "m");
    let model = Arc::new(HttpModel::with_options(endpoint, HttpOptions::default()).unwrap());
    let tools = ToolSet::builtin(dir.path(), &ToolOptions::default()).unwrap();
    let agent = BuiltinAgent::new(model, tools, "test".into());
    let first = turn(&agent, dir.path(), 1).await;
    let second = turn(&agent, dir.path(), 2).await;
    let bodies = server
        .requests()
        .iter()
        .map(|r| unmarked(&r.body))
        .collect();
    (first, second, bodies)
}

#[tokio::test]
async fn on_anthropic_each_call_reads_the_turn_so_far_and_the_next_turn_reads_its_start() {
    let (first, second, bodies) = two_iterations(Api::Anthropic).await;
    assert_eq!(bodies.len(), 4);
    // The same system prompt and tools, and each call's messages begin with the last one's.
    for pair in bodies.windows(2) {
        assert_eq!(pair[0]["system"], pair[1]["system"]);
        assert_eq!(pair[0]["tools"], pair[1]["tools"]);
    }
    for pair in bodies[..3].windows(2) {
        let (before, after) = (
            pair[0]["messages"].as_array().unwrap(),
            pair[1]["messages"].as_array().unwrap(),
        );
        assert_eq!(before[..], after[..before.len()]);
    }
    assert_eq!(
        bodies[3]["messages"], bodies[0]["messages"],
        "a fresh turn starts the same"
    );
    // The rolling mark leaves nothing uncached: each call reads the calls before and writes
    // only what it adds.
    assert!(first.cached_input_tokens > 0 && first.cache_write_input_tokens > 0);
    assert_eq!(
        first.cached_input_tokens + first.cache_write_input_tokens,
        first.input_tokens,
        "{first:?}"
    );
    // The next iteration's one call is the last iteration's first call again: all read.
    assert_eq!(
        second.cached_input_tokens, second.input_tokens,
        "{second:?}"
    );
    assert_eq!(second.cache_write_input_tokens, 0);
}

#[tokio::test]
async fn on_openai_chat_the_next_turn_reads_the_long_prefix_without_marks() {
    let (first, second, bodies) = two_iterations(Api::OpenAiChat).await;
    assert!(
        bodies
            .iter()
            .all(|body| !body.to_string().contains("cache_control"))
    );
    assert!(first.cached_input_tokens > 0, "{first:?}");
    assert_eq!(
        first.cache_write_input_tokens + second.cache_write_input_tokens,
        0
    );
    // Everything but the last few tokens, in 128-token steps.
    assert!(second.cached_input_tokens >= 1024, "{second:?}");
    assert!(
        second.input_tokens - second.cached_input_tokens < 128,
        "{second:?}"
    );
}
