use agent_client_protocol::v1::schema::SessionNotification;

use super::TurnState;
use crate::AgentEvent;

fn fold(updates: &[serde_json::Value]) -> (TurnState, Vec<AgentEvent>) {
    let mut state = TurnState::default();
    let mut events = Vec::new();
    for update in updates {
        let n: SessionNotification =
            serde_json::from_value(serde_json::json!({"sessionId": "s", "update": update}))
                .unwrap();
        events.extend(state.apply(n.update));
    }
    (state, events)
}

#[test]
fn the_final_message_is_the_text_after_the_last_tool_call() {
    let (state, events) = fold(&[
        serde_json::json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Let me look."}}),
        serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "1", "title": "cat src/lib.rs", "kind": "read", "status": "pending"}),
        serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "1", "status": "completed"}),
        serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "1", "status": "completed"}),
        serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "2", "title": "cargo test", "kind": "execute", "status": "in_progress"}),
        serde_json::json!({"sessionUpdate": "tool_call_update", "toolCallId": "2", "status": "failed"}),
        serde_json::json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done: "}}),
        serde_json::json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "<promise>DONE</promise>"}}),
        serde_json::json!({"sessionUpdate": "usage_update", "used": 15, "size": 1000, "cost": {"amount": 0.25, "currency": "USD"}}),
    ]);
    assert_eq!(state.final_message(), "Done: <promise>DONE</promise>");
    assert_eq!(state.tool_calls, 2);
    assert_eq!(state.cost_usd, Some(0.25));
    insta::assert_json_snapshot!(events, @r#"
    [
      {
        "type": "tool_call",
        "tool": "read",
        "summary": "cat src/lib.rs",
        "is_error": false
      },
      {
        "type": "tool_call",
        "tool": "execute",
        "summary": "cargo test",
        "is_error": true
      }
    ]
    "#);
}

#[test]
fn a_plan_is_one_event() {
    let (_, events) = fold(&[serde_json::json!({"sessionUpdate": "plan", "entries": [
        {"content": "read the code", "status": "completed", "priority": "medium"},
        {"content": "fix the bug", "status": "pending", "priority": "high"}
    ]})]);
    assert_eq!(
        events,
        [AgentEvent::ToolCall {
            tool: "plan".into(),
            summary: "plan: read the code; fix the bug".into(),
            is_error: false
        }]
    );
}

#[test]
fn a_usage_update_without_a_count_still_brings_its_cost() {
    let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":null,"size":200000,"cost":{"amount":0.0421,"currency":"USD"}}}}"#;
    let mended: serde_json::Value =
        serde_json::from_str(&crate::acp::agent::lenient(line.to_owned())).unwrap();
    let n: SessionNotification = serde_json::from_value(mended["params"].clone()).unwrap();
    let mut state = TurnState::default();
    state.apply(n.update);
    assert_eq!(state.cost_usd, Some(0.0421));
    // Anything else is left as it came.
    let other = r#"{"jsonrpc":"2.0","method":"session/update","params":{"used":null}}"#;
    assert_eq!(crate::acp::agent::lenient(other.to_owned()), other);
}
