//! The in-process scripted model: turns, functions of the request, exhaustion, delay and
//! cancellation, tool-name resolution — through the same trait object executors hold.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tether_model::scripted::{Script, ScriptedModel, Turn};
use tether_model::{Message, ModelClient, ModelError, Request, StopReason, ToolSpec, Usage};
use tokio_util::sync::CancellationToken;

fn request() -> Request {
    Request::new(vec![Message::user("go")])
}

#[tokio::test]
async fn turns_are_played_in_order_then_exhaustion_is_an_error() {
    let model: Arc<dyn ModelClient> = Arc::new(ScriptedModel::new(Script::turns([
        Turn::tool("write", json!({"path": "a"})).with_text("Let me write."),
        Turn::text("all done").with_usage(3, 4),
    ])));
    let first = model
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(first.text, "Let me write.");
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.tool_calls[0].id, "call_1");
    assert_eq!(first.tool_calls[0].arguments, json!({"path": "a"}));
    let second = model
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(second.text, "all done");
    assert_eq!(
        second.usage,
        Usage {
            input_tokens: 3,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 4
        }
    );
    let err = model
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap_err();
    match err {
        ModelError::Script { detail } => {
            assert!(detail.contains("2 turn(s) are used up"), "{detail}")
        }
        other => panic!("expected Script, got {other:?}"),
    }
}

#[tokio::test]
async fn a_final_turn_repeats_forever() {
    let script = Script::turns([Turn::text("one")]).then_repeat(Turn::text("again"));
    let model = ScriptedModel::new(script.clone());
    for expected in ["one", "again", "again"] {
        let response = model
            .complete(&request(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(response.text, expected);
    }
    assert_eq!(script.served(), 3, "clones share the cursor");
    assert_eq!(script.remaining(), Some(0));
}

#[tokio::test]
async fn from_fn_answers_from_the_request_and_resolves_tool_names() {
    let model = ScriptedModel::new(Script::from_fn(|request: &Request| {
        match request.last_tool_result() {
            Some((Some(tool), answer)) if tool.ends_with("ask_human") => {
                Turn::text(format!("human: {answer}"))
            }
            _ => Turn::tool("ask_human", json!({"question": "ok?"})),
        }
    }));
    let tools = vec![ToolSpec::new(
        "mcp__tether__ask_human",
        "Ask.",
        json!({"type": "object"}),
    )];
    let mut request = request().with_tools(tools);
    let ask = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(ask.tool_calls[0].name, "mcp__tether__ask_human");
    request.messages.push(ask.to_message());
    request
        .messages
        .push(Message::tool_result(ask.tool_calls[0].id.clone(), "Y"));
    let answer = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(answer.text, "human: Y");
}

#[tokio::test]
async fn a_delayed_answer_can_be_cancelled() {
    let script = Script::turns([Turn::text("slow")]);
    let model = ScriptedModel::new(script.clone()).with_delay(Duration::from_secs(600));
    let cancel = CancellationToken::new();
    let call = tokio::spawn(model.complete(&request(), cancel.clone()));
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, Err(ModelError::Cancelled));
    assert_eq!(
        script.served(),
        0,
        "a cancelled call does not use up a turn"
    );
}

#[tokio::test]
async fn usage_is_estimated_when_not_scripted() {
    let model = ScriptedModel::new(Script::turns([Turn::text("12345678")]));
    let request = Request::new(vec![Message::user("abcdefghijkl")]);
    let response = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 3,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 2
        }
    );
}
