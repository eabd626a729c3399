use std::collections::VecDeque;

use serde_json::json;
use tether_config::Api;

use super::{parser, request_body, request_url};
use crate::sse::SseFrame;
use crate::{Message, ModelError, Request, StopReason, StreamEvent, ToolCall, Usage};

#[test]
fn base_url_rule() {
    let cases = [
        (
            Api::OpenAiChat,
            "http://h:1/v1",
            "http://h:1/v1/chat/completions",
        ),
        (
            Api::OpenAiChat,
            "http://h:1/v1/",
            "http://h:1/v1/chat/completions",
        ),
        (
            Api::OpenAiResponses,
            "https://api.openai.com/v1",
            "https://api.openai.com/v1/responses",
        ),
        (
            Api::Anthropic,
            "https://api.anthropic.com",
            "https://api.anthropic.com/v1/messages",
        ),
        (
            Api::Anthropic,
            "https://api.anthropic.com/",
            "https://api.anthropic.com/v1/messages",
        ),
        (Api::Anthropic, "http://h:1/v1", "http://h:1/v1/messages"),
        (
            Api::Anthropic,
            "http://h:1/proxy",
            "http://h:1/proxy/v1/messages",
        ),
    ];
    for (api, base, expected) in cases {
        assert_eq!(request_url(api, base), expected, "{api:?} {base}");
    }
}

fn feed(api: Api, frames: &[(Option<&str>, &str)]) -> Result<Vec<StreamEvent>, ModelError> {
    let mut parser = parser(api);
    let mut out = VecDeque::new();
    for (event, data) in frames {
        let frame = SseFrame {
            event: event.map(str::to_owned),
            data: (*data).to_owned(),
        };
        if parser.frame(&frame, &mut out)? {
            return Ok(out.into());
        }
    }
    parser.end(&mut out)?;
    Ok(out.into())
}

#[test]
fn responses_parser_handles_the_full_openai_event_set_without_duplicates() {
    // What api.openai.com sends: item added, argument deltas, item done repeating everything.
    let events = feed(
        Api::OpenAiResponses,
        &[
            (Some("response.created"), r#"{"type":"response.created","response":{"id":"r"}}"#),
            (Some("response.output_item.added"), r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1"}}"#),
            (Some("response.output_text.delta"), r#"{"type":"response.output_text.delta","item_id":"m1","output_index":0,"delta":"Hi"}"#),
            (Some("response.output_item.done"), r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","content":[{"type":"output_text","text":"Hi"}]}}"#),
            (Some("response.output_item.added"), r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc1","call_id":"call_9","name":"ls","arguments":""}}"#),
            (Some("response.function_call_arguments.delta"), r#"{"type":"response.function_call_arguments.delta","item_id":"fc1","output_index":1,"delta":"{\"path\":"}"#),
            (Some("response.function_call_arguments.delta"), r#"{"type":"response.function_call_arguments.delta","item_id":"fc1","output_index":1,"delta":"\".\"}"}"#),
            (Some("response.output_item.done"), r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc1","call_id":"call_9","name":"ls","arguments":"{\"path\":\".\"}"}}"#),
            (Some("response.completed"), r#"{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12}}}"#),
        ],
    )
    .unwrap();
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Hi".into()),
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "call_9".into(),
                name: "ls".into()
            },
            StreamEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: "{\"path\":".into()
            },
            StreamEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: "\".\"}".into()
            },
            StreamEvent::ToolCallFinished {
                index: 0,
                call: ToolCall::new("call_9", "ls", json!({"path": "."})),
            },
            StreamEvent::Usage(Usage {
                input_tokens: 5,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: 7
            }),
            StreamEvent::Done {
                stop_reason: StopReason::ToolUse
            },
        ]
    );
}

#[test]
fn responses_incomplete_is_max_tokens() {
    let events = feed(
        Api::OpenAiResponses,
        &[(None, r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}"#)],
    )
    .unwrap();
    assert_done(&events, StopReason::MaxTokens);
}

#[test]
fn chat_parser_accepts_a_stream_closed_after_finish_reason_without_done() {
    let events = feed(
        Api::OpenAiChat,
        &[
            (
                None,
                r#"{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}"#,
            ),
            (
                None,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
            ),
        ],
    )
    .unwrap();
    assert_done(&events, StopReason::MaxTokens);
}

#[test]
fn chat_parser_rejects_a_stream_that_just_stops() {
    let err = feed(
        Api::OpenAiChat,
        &[(
            None,
            r#"{"choices":[{"index":0,"delta":{"content":"o"},"finish_reason":null}]}"#,
        )],
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::MalformedStream { .. }), "{err:?}");
}

#[test]
fn chat_tool_calls_with_stop_finish_reason_are_still_tool_use() {
    let events = feed(
        Api::OpenAiChat,
        &[
            (None, r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"ls","arguments":"{oops"}}]},"finish_reason":"stop"}]}"#),
            (None, "[DONE]"),
        ],
    )
    .unwrap();
    let call = events.iter().find_map(|event| match event {
        StreamEvent::ToolCallFinished { call, .. } => Some(call.clone()),
        _ => None,
    });
    let call = call.unwrap();
    assert_eq!(call.raw_arguments, "{oops");
    assert!(call.arguments.is_null());
    assert!(call.arguments_error().is_some());
    assert_done(&events, StopReason::ToolUse);
}

#[test]
fn anthropic_error_events_are_typed() {
    let overloaded = feed(
        Api::Anthropic,
        &[(
            Some("error"),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )],
    )
    .unwrap_err();
    assert!(
        matches!(overloaded, ModelError::Server { status: None, .. }),
        "{overloaded:?}"
    );
    assert!(overloaded.is_retryable());
    let limited = feed(
        Api::Anthropic,
        &[(
            Some("error"),
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )],
    )
    .unwrap_err();
    assert_eq!(limited, ModelError::RateLimited { retry_after: None });
}

#[test]
fn anthropic_body_merges_roles_and_folds_system_messages() {
    let call = ToolCall::from_raw("toolu_1", "ls", "{not json");
    let mut request = Request::new(vec![
        Message::user("hi"),
        Message::system("extra rule"),
        Message::assistant_tool_calls("", vec![call]),
        Message::tool_error("toolu_1", "bad arguments"),
        Message::user("and then"),
        Message::assistant(""),
    ])
    .with_system("base");
    request.max_tokens = 100;
    let body = request_body(Api::Anthropic, "m", &request);
    assert_eq!(
        body,
        json!({
            "model": "m",
            "max_tokens": 100,
            "stream": true,
            "system": [{"type": "text", "text": "base\n\nextra rule", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "bad arguments", "is_error": true},
                    {"type": "text", "text": "and then", "cache_control": {"type": "ephemeral"}},
                ]},
            ],
        })
    );
}

/// Where a body carries Anthropic's cache marks, as JSON pointers.
fn cache_marks(body: &serde_json::Value) -> Vec<String> {
    fn walk(value: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map {
                    if key == "cache_control" {
                        assert_eq!(inner, &json!({"type": "ephemeral"}));
                        out.push(at.to_owned());
                    } else {
                        walk(inner, &format!("{at}/{key}"), out);
                    }
                }
            }
            serde_json::Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    walk(inner, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, "", &mut out);
    out.sort();
    out
}

fn two_tools() -> Vec<crate::ToolSpec> {
    ["ls", "read"]
        .map(|name| crate::ToolSpec::new(name, "a tool", json!({"type": "object"})))
        .to_vec()
}

#[test]
fn anthropic_marks_the_last_tool_the_system_and_the_newest_block() {
    let request = Request::new(vec![
        Message::user("go"),
        Message::assistant_tool_calls("", vec![ToolCall::new("t1", "ls", json!({}))]),
        Message::tool_result("t1", "a.txt"),
    ])
    .with_system("rules")
    .with_tools(two_tools());
    let body = request_body(Api::Anthropic, "m", &request);
    assert_eq!(
        cache_marks(&body),
        ["/messages/2/content/0", "/system/0", "/tools/1"]
    );
    // The rolling mark moves to the newest block; the earlier blocks are sent unmarked, as
    // the previous call sent them but for its mark.
    let mut longer = request;
    longer.messages.push(Message::assistant("done"));
    let next = request_body(Api::Anthropic, "m", &longer);
    assert_eq!(
        cache_marks(&next),
        ["/messages/3/content/0", "/system/0", "/tools/1"]
    );
    assert_eq!(
        next["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"})
    );
}

#[test]
fn a_one_shot_anthropic_call_marks_only_its_system_and_tools() {
    let request = Request::new(vec![Message::user("judge this")])
        .with_system("rules")
        .with_tools(two_tools())
        .with_conversation_cache(false);
    let body = request_body(Api::Anthropic, "m", &request);
    assert_eq!(cache_marks(&body), ["/system/0", "/tools/1"]);
    let bare = request_body(
        Api::Anthropic,
        "m",
        &Request::new(vec![Message::user("hi")]),
    );
    assert_eq!(cache_marks(&bare), ["/messages/0/content/0"]);
}

#[test]
fn openai_bodies_carry_no_cache_marks_and_repeat_their_prefix() {
    let first = Request::new(vec![Message::user("go")])
        .with_system("rules")
        .with_tools(two_tools());
    let mut second = first.clone();
    second.messages.push(Message::assistant("ok"));
    for api in [Api::OpenAiChat, Api::OpenAiResponses] {
        let a = request_body(api, "m", &first).to_string();
        let b = request_body(api, "m", &second).to_string();
        assert!(cache_marks(&request_body(api, "m", &second)).is_empty());
        // Everything before the conversation's end is sent with the same bytes.
        let list = if api == Api::OpenAiChat {
            "\"messages\":["
        } else {
            "\"input\":["
        };
        let end = a.find(list).unwrap() + list.len();
        assert_eq!(a[..end], b[..end], "{api:?}");
    }
}

#[test]
fn anthropic_usage_splits_cache_reads_and_writes() {
    let events = feed(
        Api::Anthropic,
        &[
            (Some("message_start"), r#"{"type":"message_start","message":{"usage":{"input_tokens":20,"cache_read_input_tokens":1500,"cache_creation_input_tokens":300,"output_tokens":1}}}"#),
            (Some("message_delta"), r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#),
            (Some("message_stop"), r#"{"type":"message_stop"}"#),
        ],
    )
    .unwrap();
    assert_eq!(
        events[0],
        StreamEvent::Usage(Usage {
            input_tokens: 1820,
            cached_input_tokens: 1500,
            cache_write_input_tokens: 300,
            output_tokens: 9,
        })
    );
}

#[test]
fn openai_usage_reports_cache_reads_only() {
    let chat = feed(
        Api::OpenAiChat,
        &[
            (None, r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}"#),
            (None, r#"{"choices":[],"usage":{"prompt_tokens":2048,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1920}}}"#),
            (None, "[DONE]"),
        ],
    )
    .unwrap();
    let responses = feed(
        Api::OpenAiResponses,
        &[(Some("response.completed"), r#"{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":2048,"input_tokens_details":{"cached_tokens":1152},"output_tokens":5}}}"#)],
    )
    .unwrap();
    let usage = |events: &[StreamEvent]| {
        events.iter().find_map(|e| match e {
            StreamEvent::Usage(u) => Some(*u),
            _ => None,
        })
    };
    assert_eq!(
        usage(&chat),
        Some(Usage {
            input_tokens: 2048,
            cached_input_tokens: 1920,
            cache_write_input_tokens: 0,
            output_tokens: 5,
        })
    );
    assert_eq!(usage(&responses).map(|u| u.cached_input_tokens), Some(1152));
}

#[test]
fn malformed_arguments_are_echoed_as_empty_objects_in_openai_history() {
    let request = Request::new(vec![Message::assistant_tool_calls(
        "",
        vec![ToolCall::from_raw("c1", "ls", "{oops")],
    )]);
    let chat = request_body(Api::OpenAiChat, "m", &request);
    assert_eq!(
        chat["messages"][0]["tool_calls"][0]["function"]["arguments"],
        "{}"
    );
    assert_eq!(chat["messages"][0]["content"], serde_json::Value::Null);
    let responses = request_body(Api::OpenAiResponses, "m", &request);
    assert_eq!(responses["input"][0]["arguments"], "{}");
}

/// The stream's last event is its end, for `reason`.
fn assert_done(events: &[StreamEvent], reason: StopReason) {
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: reason
        })
    );
}
