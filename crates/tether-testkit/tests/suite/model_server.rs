//! The fake model server's own contract, checked over raw HTTP: tool names read from the request
//! (Codex's namespaced MCP tools), unknown routes, and which fault wins.

use std::time::Duration;

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::sse::SseDecoder;
use tether_testkit::{FakeModelServer, Fault};

/// The bound on any wait in a test: generous, never reached when things work.
const WAIT: Duration = Duration::from_secs(10);

/// A bare HTTP client, for talking to the fake server without tether-model's mapping.
pub(super) fn raw_http() -> reqwest::Client {
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .unwrap()
}

async fn post(server: &FakeModelServer, api: Api, body: &Value) -> (u16, String) {
    let url = tether_model::request_url(api, &server.base_url(api));
    let response = raw_http().post(url).json(body).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

fn frames(text: &str) -> Vec<Value> {
    let mut decoder = SseDecoder::new();
    let mut frames = Vec::new();
    decoder.push(text.as_bytes(), &mut frames);
    decoder.finish(&mut frames);
    frames
        .iter()
        .filter(|frame| frame.data != "[DONE]")
        .map(|frame| serde_json::from_str(&frame.data).unwrap())
        .collect()
}

#[tokio::test]
async fn namespaced_responses_tools_are_called_by_namespace_and_name() {
    let server = FakeModelServer::start(Script::turns([Turn::tool(
        "ask_human",
        json!({"question": "?"}),
    )]))
    .await
    .unwrap();
    let body = json!({
        "model": "m", "stream": true, "instructions": "x",
        "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "hi"}]}],
        "tools": [{"type": "namespace", "name": "mcp__sup", "tools": [
            {"type": "function", "name": "ask_human", "parameters": {"type": "object"}},
        ]}],
    });
    let (status, text) = post(&server, Api::OpenAiResponses, &body).await;
    assert_eq!(status, 200, "{text}");
    let item = frames(&text)
        .into_iter()
        .find(|frame| frame["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(item["item"]["namespace"], "mcp__sup");
    assert_eq!(item["item"]["name"], "ask_human");
}

#[tokio::test]
async fn claude_style_mcp_tool_names_are_resolved() {
    let server = FakeModelServer::start(Script::turns([Turn::tool("ask_human", json!({}))]))
        .await
        .unwrap();
    let body = json!({
        "model": "m", "stream": true, "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"name": "Bash", "input_schema": {}},
            {"name": "mcp__sup__ask_human", "input_schema": {}},
        ],
    });
    let (_, text) = post(&server, Api::Anthropic, &body).await;
    let start = frames(&text)
        .into_iter()
        .find(|frame| frame["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(start["content_block"]["name"], "mcp__sup__ask_human");
}

#[tokio::test]
async fn unknown_routes_are_recorded_and_answered_404() {
    let server = FakeModelServer::start(Script::turns([])).await.unwrap();
    let url = format!("{}/embeddings", server.base_url(Api::OpenAiChat));
    let response = raw_http().post(url).body("x").send().await.unwrap();
    assert_eq!(response.status(), 404);
    let recorded = server.wait_for_request(0, WAIT).await.unwrap();
    assert_eq!(recorded.path, "/v1/embeddings");
    assert_eq!(recorded.raw_body, "x");
    assert_eq!(recorded.body, Value::Null);
}

#[tokio::test]
async fn the_models_list_wants_the_key_in_either_header() {
    let server = FakeModelServer::builder(Script::turns([]))
        .require_key("sk-right")
        .start()
        .await
        .unwrap();
    let url = format!("{}/models", server.base_url(Api::OpenAiChat));
    let get = |header: &'static str, value: &'static str| {
        raw_http().get(&url).header(header, value).send()
    };
    assert_eq!(
        get("authorization", "Bearer sk-right")
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(get("x-api-key", "sk-right").await.unwrap().status(), 200);
    assert_eq!(get("x-api-key", "sk-wrong").await.unwrap().status(), 401);
    let recorded = server.wait_for_request(2, WAIT).await.unwrap();
    assert_eq!(recorded.path, "/v1/models");
    assert_eq!(recorded.header("x-api-key"), Some("<redacted>"));
}

#[tokio::test]
async fn an_indexed_fault_wins_over_next_n_and_next_n_runs_out() {
    let server = FakeModelServer::start(Script::turns([])).await.unwrap();
    server.fault_next(2, Fault::Status(503));
    server.fault_on(0, Fault::Status(500));
    let body = json!({"model": "m", "messages": []});
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(post(&server, Api::OpenAiChat, &body).await.0);
    }
    // #0: indexed 500; #1, #2: the two 503s; #3: no fault, script exhausted → 400.
    assert_eq!(statuses, [500, 503, 503, 400]);
}

#[tokio::test]
async fn waiting_for_a_request_that_never_comes_times_out() {
    let server = FakeModelServer::start(Script::turns([])).await.unwrap();
    let err = server
        .wait_for_request(0, Duration::from_millis(20))
        .await
        .unwrap_err();
    assert_eq!(err.seen, 0);
    assert!(err.to_string().contains("request #0"), "{err}");
}
