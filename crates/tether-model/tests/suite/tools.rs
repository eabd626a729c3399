//! Tool calls for each wire format: tools in, a call out, its result back in the next request
//! (asserting the exact JSON the client sent), and scripts that read the request.

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{Message, ModelClient, Request, StopReason, ToolCall};
use tether_testkit::FakeModelServer;
use tokio_util::sync::CancellationToken;

use super::common::{MODEL, WAIT, client, per_api, tools};

fn first_request() -> Request {
    let mut request = Request::new(vec![Message::user("Write a.txt")])
        .with_system("You are terse.")
        .with_tools(tools());
    request.max_tokens = 1024;
    request
}

async fn tool_call_round_trip(api: Api) {
    let server = FakeModelServer::start(Script::turns([
        Turn::tool("write", json!({"path": "a.txt", "content": "hi"})).with_text("Writing."),
        Turn::text("done"),
    ]))
    .await
    .unwrap();
    let model = client(&server, api);
    let mut request = first_request();
    let response = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "Writing.");
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.tool_calls.len(), 1);
    let call = &response.tool_calls[0];
    assert_eq!(call.name, "write");
    assert_eq!(call.arguments, json!({"path": "a.txt", "content": "hi"}));
    // The arguments as the server sent them, key order and all: sent back byte for byte.
    assert_eq!(
        serde_json::from_str::<Value>(&call.raw_arguments).unwrap(),
        json!({"path": "a.txt", "content": "hi"})
    );
    assert_eq!(call.arguments_error(), None);
    assert!(!call.id.is_empty());

    request.messages.push(response.to_message());
    request
        .messages
        .push(Message::tool_result(call.id.clone(), "wrote 2 bytes"));
    let done = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.text, "done");
    assert_eq!(done.stop_reason, StopReason::EndTurn);

    let first = server.wait_for_request(0, WAIT).await.unwrap();
    let second = server.wait_for_request(1, WAIT).await.unwrap();
    assert_eq!(first.body, expected_first_body(api));
    assert_eq!(
        second.body,
        expected_second_body(api, &call.id, &call.raw_arguments)
    );
}
per_api!(tool_call_round_trip);

fn tools_json(api: Api) -> Value {
    let write = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    });
    let ask = json!({"type": "object", "properties": {"question": {"type": "string"}}});
    let specs = [
        ("write", "Write a file.", write),
        ("mcp__tether__ask_human", "Ask a human.", ask),
    ];
    specs
        .into_iter()
        .map(|(name, description, schema)| match api {
            Api::OpenAiChat => json!({
                "type": "function",
                "function": {"name": name, "description": description, "parameters": schema},
            }),
            Api::OpenAiResponses => json!({
                "type": "function", "name": name, "description": description,
                "parameters": schema, "strict": false,
            }),
            Api::Anthropic => json!({
                "name": name, "description": description, "input_schema": schema,
            }),
        })
        .collect()
}

/// Anthropic's prompt cache mark.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn expected_first_body(api: Api) -> Value {
    match api {
        Api::OpenAiChat => json!({
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Write a.txt"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 1024,
            "tools": tools_json(api),
        }),
        Api::OpenAiResponses => json!({
            "model": MODEL,
            "instructions": "You are terse.",
            "input": [
                {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "Write a.txt"}]},
            ],
            "stream": true,
            "store": false,
            "max_output_tokens": 1024,
            "tools": tools_json(api),
        }),
        Api::Anthropic => {
            // Marked for the prompt cache: the last tool, the system block, the newest block.
            let mut tools = tools_json(api);
            tools[1]["cache_control"] = ephemeral();
            json!({
                "model": MODEL,
                "system": [
                    {"type": "text", "text": "You are terse.", "cache_control": ephemeral()},
                ],
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "Write a.txt", "cache_control": ephemeral()},
                    ]},
                ],
                "stream": true,
                "max_tokens": 1024,
                "tools": tools,
            })
        }
    }
}

fn expected_second_body(api: Api, id: &str, arguments: &str) -> Value {
    let mut body = expected_first_body(api);
    match api {
        Api::OpenAiChat => {
            let messages = body["messages"].as_array_mut().unwrap();
            messages.push(json!({
                "role": "assistant",
                "content": "Writing.",
                "tool_calls": [{
                    "id": id, "type": "function",
                    "function": {"name": "write", "arguments": arguments},
                }],
            }));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": "wrote 2 bytes"}));
        }
        Api::OpenAiResponses => {
            let input = body["input"].as_array_mut().unwrap();
            input.push(json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Writing."}]}));
            input.push(
                json!({"type": "function_call", "call_id": id, "name": "write",
                "arguments": arguments}),
            );
            input.push(json!({"type": "function_call_output", "call_id": id,
                "output": "wrote 2 bytes"}));
        }
        Api::Anthropic => {
            let messages = body["messages"].as_array_mut().unwrap();
            // The rolling mark moved on to the newest block.
            messages[0]["content"][0]
                .as_object_mut()
                .unwrap()
                .remove("cache_control");
            messages.push(json!({"role": "assistant", "content": [
                {"type": "text", "text": "Writing."},
                {"type": "tool_use", "id": id, "name": "write",
                 "input": {"path": "a.txt", "content": "hi"}},
            ]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": "wrote 2 bytes",
                 "cache_control": ephemeral()},
            ]}));
        }
    }
    body
}

/// A script that reads the request: it asks a human (by the short name; the server finds the
/// offered `mcp__tether__ask_human`), then repeats the human's answer.
async fn scripts_can_answer_from_the_request(api: Api) {
    let server = FakeModelServer::start(Script::from_fn(|request: &Request| {
        match request.last_tool_result() {
            Some((Some("mcp__tether__ask_human"), answer)) => {
                Turn::text(format!("The human said {answer}"))
            }
            _ => Turn::tool("ask_human", json!({"question": "Proceed?"})),
        }
    }))
    .await
    .unwrap();
    let model = client(&server, api);
    let mut request = first_request();
    let ask = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(ask.tool_calls.len(), 1);
    assert_eq!(ask.tool_calls[0].name, "mcp__tether__ask_human");
    request.messages.push(ask.to_message());
    request
        .messages
        .push(Message::tool_result(ask.tool_calls[0].id.clone(), "Y"));
    let answer = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(answer.text, "The human said Y");
}
per_api!(scripts_can_answer_from_the_request);

/// Several calls in one turn keep their order and ids; an error result is flagged where the
/// format can carry it (Anthropic `is_error`).
async fn parallel_calls_and_error_results(api: Api) {
    let server = FakeModelServer::start(Script::turns([
        Turn::tool("write", json!({"path": "a", "content": "1"}))
            .and_tool("write", json!({"path": "b", "content": "2"})),
        Turn::text("ok"),
    ]))
    .await
    .unwrap();
    let model = client(&server, api);
    let mut request = first_request();
    let response = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let paths: Vec<&Value> = response
        .tool_calls
        .iter()
        .map(|call| &call.arguments["path"])
        .collect();
    assert_eq!(paths, [&json!("a"), &json!("b")]);
    assert_ne!(response.tool_calls[0].id, response.tool_calls[1].id);
    request.messages.push(response.to_message());
    for (call, result) in response.tool_calls.iter().zip(["fine", "disk full"]) {
        request.messages.push(if result == "fine" {
            Message::tool_result(call.id.clone(), result)
        } else {
            Message::tool_error(call.id.clone(), result)
        });
    }
    model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let sent = server.wait_for_request(1, WAIT).await.unwrap();
    if api == Api::Anthropic {
        let results = sent.body["messages"][2]["content"].clone();
        assert_eq!(results[0].get("is_error"), None);
        assert_eq!(results[1]["is_error"], true);
    }
}
per_api!(parallel_calls_and_error_results);

#[test]
fn tool_call_keeps_malformed_raw_arguments() {
    let call = ToolCall::from_raw("c", "write", "{\"path\": ");
    assert!(call.arguments.is_null());
    assert_eq!(call.raw_arguments, "{\"path\": ");
    assert!(call.arguments_error().unwrap().contains("not valid JSON"));
    let empty = ToolCall::from_raw("c", "ls", "");
    assert_eq!(empty.arguments, json!({}));
    assert_eq!(empty.arguments_error(), None);
}
