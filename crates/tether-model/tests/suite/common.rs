//! Fixtures: clients pointed at the fake server, fast retry policies, a per-API test macro.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tether_config::{Api, Secret};
use tether_model::{
    Endpoint, EventStream, HttpModel, HttpOptions, ModelError, RetryPolicy, StreamEvent, ToolSpec,
};
use tether_testkit::FakeModelServer;

/// How long any wait on the server may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// The model name every test client asks for.
pub const MODEL: &str = "test-model";

/// Retries in milliseconds, so fault tests stay fast.
pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(2),
    }
}

pub fn options(retry: RetryPolicy) -> HttpOptions {
    HttpOptions {
        retry,
        ..HttpOptions::default()
    }
}

pub fn endpoint(server: &FakeModelServer, api: Api) -> Endpoint {
    Endpoint::new(api, server.base_url(api), MODEL)
}

/// A client with three fast attempts and no key.
pub fn client(server: &FakeModelServer, api: Api) -> HttpModel {
    HttpModel::with_options(endpoint(server, api), options(fast_retry(3))).unwrap()
}

pub fn client_with_key(server: &FakeModelServer, api: Api, key: &str) -> HttpModel {
    let endpoint = endpoint(server, api).with_api_key(Secret::new(key));
    HttpModel::with_options(endpoint, options(fast_retry(3))).unwrap()
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "write",
            "Write a file.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            }),
        ),
        ToolSpec::new(
            "mcp__tether__ask_human",
            "Ask a human.",
            json!({"type": "object", "properties": {"question": {"type": "string"}}}),
        ),
    ]
}

/// Drains a stream: the events before the end or the first error, and that error.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    while let Some(item) = tokio::time::timeout(WAIT, stream.next()).await.unwrap() {
        match item {
            Ok(event) => events.push(event),
            Err(err) => {
                assert!(
                    tokio::time::timeout(WAIT, stream.next())
                        .await
                        .unwrap()
                        .is_none(),
                    "a stream ends after its error"
                );
                return (events, Some(err));
            }
        }
    }
    (events, None)
}

pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Runs an `async fn(Api)` once per wire format, as three tests in a module of that name.
macro_rules! per_api {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn openai_chat() {
                super::$name(tether_config::Api::OpenAiChat).await;
            }
            #[tokio::test]
            async fn openai_responses() {
                super::$name(tether_config::Api::OpenAiResponses).await;
            }
            #[tokio::test]
            async fn anthropic() {
                super::$name(tether_config::Api::Anthropic).await;
            }
        }
    };
}
pub(crate) use per_api;

/// How many frames of a text turn come before (and including) its first text delta.
pub fn frames_through_first_text(api: Api) -> usize {
    match api {
        // role chunk, first content chunk
        Api::OpenAiChat => 2,
        // response.created, output_item.added, first output_text.delta
        Api::OpenAiResponses => 3,
        // message_start, ping, content_block_start, first content_block_delta
        Api::Anthropic => 4,
    }
}

/// A bare HTTP client, for talking to the fake server without tether-model's mapping.
pub fn raw_http() -> reqwest::Client {
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
