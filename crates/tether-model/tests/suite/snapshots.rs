//! Snapshots of what a model reads and what a client parses: one recorded request body per
//! wire format (the tool-result turn, the richest), and the fake server's exact SSE bytes.

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{Message, ModelClient, Request};
use tether_testkit::FakeModelServer;
use tokio_util::sync::CancellationToken;

use super::common::{WAIT, client, tools};

const APIS: [(Api, &str); 3] = [
    (Api::OpenAiChat, "openai_chat"),
    (Api::OpenAiResponses, "openai_responses"),
    (Api::Anthropic, "anthropic"),
];

/// Replaces tool-call ids (they depend on the server) with a placeholder, wherever they are.
fn redact_ids(value: &mut Value, id: &str) {
    match value {
        Value::String(text) if text == id => *text = "[tool-call-id]".to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|item| redact_ids(item, id)),
        Value::Object(map) => map.values_mut().for_each(|item| redact_ids(item, id)),
        _ => {}
    }
}

#[tokio::test]
async fn request_bodies() {
    for (api, name) in APIS {
        let server = FakeModelServer::start(Script::turns([
            Turn::tool("write", json!({"path": "a.txt", "content": "hi"})).with_text("Writing."),
            Turn::text("done"),
        ]))
        .await
        .unwrap();
        let model = client(&server, api);
        let mut request = Request::new(vec![Message::user("Write a.txt")])
            .with_system("You are terse.")
            .with_tools(tools());
        request.max_tokens = 1024;
        request.temperature = Some(0.5);
        let response = model
            .complete(&request, CancellationToken::new())
            .await
            .unwrap();
        let id = response.tool_calls[0].id.clone();
        request.messages.push(response.to_message());
        request
            .messages
            .push(Message::tool_result(id.clone(), "wrote 2 bytes"));
        model
            .complete(&request, CancellationToken::new())
            .await
            .unwrap();
        let mut body = server.wait_for_request(1, WAIT).await.unwrap().body;
        redact_ids(&mut body, &id);
        insta::assert_json_snapshot!(format!("request_body_{name}"), body);
    }
}

#[tokio::test]
async fn fake_server_sse_bytes() {
    let http = super::common::raw_http();
    for (api, name) in APIS {
        let server = FakeModelServer::start(Script::turns([Turn::text("Hi there")
            .and_tool("write", json!({"path": "a"}))
            .with_usage(12, 5)]))
        .await
        .unwrap();
        let url = tether_model::request_url(api, &server.base_url(api));
        let body = match api {
            Api::OpenAiChat => json!({"model": "m", "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function": {"name": "write", "parameters": {}}}]}),
            Api::OpenAiResponses => json!({"model": "m", "stream": true, "input": "hi",
                "tools": [{"type": "function", "name": "write", "parameters": {}}]}),
            Api::Anthropic => json!({"model": "m", "stream": true, "max_tokens": 10,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"name": "write", "input_schema": {}}]}),
        };
        let response = http.post(url).json(&body).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let text = response.text().await.unwrap();
        insta::assert_snapshot!(format!("sse_bytes_{name}"), text);
    }
}
