//! The fake server's HTTP handlers: record, authenticate, inject faults, play the script.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tether_config::Api;
use tether_model::Usage;
use tether_model::scripted::{Script, Turn};
use tokio_util::sync::CancellationToken;

use super::Fault;
use super::body::{DisconnectGuard, sse_body};
use super::fault::FaultPlan;
use super::prompt_cache::PromptCache;
use super::record::Recorder;
use super::wire::{self, Parsed, RenderContext};

pub(crate) struct Shared {
    pub(crate) script: Script,
    pub(crate) recorder: Arc<Recorder>,
    pub(crate) faults: FaultPlan,
    pub(crate) key: Option<String>,
    /// The simulated prompt cache, when the server plays one.
    pub(crate) prompt_cache: Option<PromptCache>,
    pub(crate) shutdown: CancellationToken,
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/responses", post(responses))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(models))
        .fallback(not_found)
        .with_state(shared)
}

async fn chat(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    handle(&s, Api::OpenAiChat, &uri, &h, &b).await
}

async fn responses(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    handle(&s, Api::OpenAiResponses, &uri, &h, &b).await
}

async fn messages(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    handle(&s, Api::Anthropic, &uri, &h, &b).await
}

/// The models list, as a setup check asks for it: 401 without the required key (in either
/// API's header), else the one fake model.
async fn models(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    s.recorder.record(uri.path(), &h, &b);
    if let Some(expected) = &s.key {
        let bearer = h
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let x_api_key = h.get("x-api-key").and_then(|v| v.to_str().ok());
        if bearer != Some(expected.as_str()) && x_api_key != Some(expected.as_str()) {
            return error(
                Api::OpenAiChat,
                StatusCode::UNAUTHORIZED,
                "Incorrect API key",
            );
        }
    }
    let body = serde_json::json!({"object": "list", "data": [{"id": "fake", "object": "model"}]});
    (
        StatusCode::OK,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}

async fn not_found(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    s.recorder.record(uri.path(), &h, &b);
    let message = format!("fake model server: no route for {}", uri.path());
    (StatusCode::NOT_FOUND, message).into_response()
}

async fn handle(s: &Shared, api: Api, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Response {
    let index = s.recorder.record(uri.path(), headers, body);
    if let Some(expected) = &s.key {
        let presented = match api {
            Api::Anthropic => headers.get("x-api-key").and_then(|v| v.to_str().ok()),
            Api::OpenAiChat | Api::OpenAiResponses => headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer ")),
        };
        if presented != Some(expected.as_str()) {
            // Like OpenAI, echo the presented key: clients must keep it out of their errors.
            let message = format!(
                "Incorrect API key provided: {}",
                presented.unwrap_or("(none)")
            );
            return error(api, StatusCode::UNAUTHORIZED, &message);
        }
    }
    let fault = s.faults.take(index);
    match &fault {
        Some(Fault::RateLimited { retry_after }) => {
            let mut response = error(api, StatusCode::TOO_MANY_REQUESTS, "Rate limit reached");
            if let Some(value) = retry_after.as_deref().and_then(|v| v.parse().ok()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
            return response;
        }
        Some(Fault::Status(code)) => {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let message = format!("fake model server: injected HTTP {code}");
            return error(api, status, &message);
        }
        Some(Fault::UsageLimit { message }) => {
            return error(api, StatusCode::TOO_MANY_REQUESTS, message);
        }
        Some(Fault::HoldBeforeHeaders) => {
            let mut guard = DisconnectGuard::new(Arc::clone(&s.recorder));
            s.shutdown.cancelled().await;
            guard.disarm();
            return error(api, StatusCode::SERVICE_UNAVAILABLE, "shutting down");
        }
        // Stream faults play (part of) the turn: see `body::sse_body`.
        Some(Fault::CutAfter(_) | Fault::MalformedAfter(_) | Fault::HoldAfter(_)) | None => {}
    }
    let json: Value = match serde_json::from_slice(body) {
        Ok(json) => json,
        Err(err) => {
            let message = format!("fake model server: the body is not JSON: {err}");
            return error(api, StatusCode::BAD_REQUEST, &message);
        }
    };
    let parsed = match wire::parse(api, &json) {
        Ok(parsed) => parsed,
        Err(err) => {
            let message = format!("fake model server: unexpected request shape: {err}");
            return error(api, StatusCode::BAD_REQUEST, &message);
        }
    };
    let turn = match s.script.next_turn(&parsed.request) {
        Ok(turn) => turn,
        Err(err) => {
            let message = format!("fake model server: {err}");
            return error(api, StatusCode::BAD_REQUEST, &message);
        }
    };
    let usage = usage(s, api, &json, &parsed, &turn);
    s.recorder.answered(index, usage);
    let context = RenderContext {
        index,
        parsed: &parsed,
        usage,
    };
    let frames = wire::render(api, &turn, &context);
    let guard = DisconnectGuard::new(Arc::clone(&s.recorder));
    let body = sse_body(frames, fault.as_ref(), guard, s.shutdown.clone());
    (
        StatusCode::OK,
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// The usage to report: the turn's own when it gives one, else the estimate, with what the
/// prompt cache (when the server plays one) read and wrote. The cache sees every request.
fn usage(s: &Shared, api: Api, body: &Value, parsed: &Parsed, turn: &Turn) -> Usage {
    let estimate = turn.usage_for(&parsed.request);
    let cached = s
        .prompt_cache
        .as_ref()
        .map(|cache| cache.serve(api, &parsed.model, body, &parsed.request, Instant::now()));
    match (turn.usage, cached) {
        (Some(explicit), _) => explicit,
        (None, Some(cached)) => Usage {
            input_tokens: cached.input,
            cached_input_tokens: cached.read,
            cache_write_input_tokens: cached.written,
            output_tokens: estimate.output_tokens,
        },
        (None, None) => estimate,
    }
}

fn error(api: Api, status: StatusCode, message: &str) -> Response {
    let body = wire::error_body(api, status.as_u16(), message);
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}
