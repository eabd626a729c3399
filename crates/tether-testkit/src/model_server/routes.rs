//! The fake server's HTTP handlers: record, authenticate, inject faults, play the script.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
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
use super::wire::{self, Parsed, RenderContext, Wire};

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
        .route("/v1beta/models/{call}", post(gemini))
        .fallback(not_found)
        .with_state(shared)
}

async fn chat(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    handle(&s, Wire::Api(Api::OpenAiChat), &uri, &h, &b).await
}

async fn responses(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    handle(&s, Wire::Api(Api::OpenAiResponses), &uri, &h, &b).await
}

async fn messages(State(s): State<Arc<Shared>>, uri: Uri, h: HeaderMap, b: Bytes) -> Response {
    handle(&s, Wire::Api(Api::Anthropic), &uri, &h, &b).await
}

/// `POST /v1beta/models/{model}:streamGenerateContent` (and `:generateContent`): Gemini's.
async fn gemini(
    State(s): State<Arc<Shared>>,
    Path(call): Path<String>,
    uri: Uri,
    h: HeaderMap,
    b: Bytes,
) -> Response {
    let wire = match call.rsplit_once(':').map(|(_, method)| method) {
        Some("streamGenerateContent") => Wire::Gemini { stream: true },
        Some("generateContent") => Wire::Gemini { stream: false },
        _ => return not_found(State(s), uri, h, b).await,
    };
    handle(&s, wire, &uri, &h, &b).await
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
                Wire::Api(Api::OpenAiChat),
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

async fn handle(s: &Shared, api: Wire, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Response {
    let index = s.recorder.record(uri.path(), headers, body);
    if let Some(expected) = &s.key {
        let presented = match api {
            Wire::Api(Api::Anthropic) => headers.get("x-api-key").and_then(|v| v.to_str().ok()),
            Wire::Api(Api::OpenAiChat | Api::OpenAiResponses) => headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer ")),
            // Gemini's: a header, or the `key` query parameter.
            Wire::Gemini { .. } => headers
                .get("x-goog-api-key")
                .and_then(|v| v.to_str().ok())
                .or_else(|| query_param(uri, "key")),
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
    let model = gemini_model(uri);
    let parsed = match wire::parse(api, &json, model) {
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
    if !sse_wanted(api, uri) {
        // Not streamed: one JSON body (Gemini's `:generateContent`, or its stream without
        // `alt=sse`: a JSON array of the chunks).
        let whole = match api {
            Wire::Gemini { stream: false } => wire::whole(&frames),
            _ => Value::Array(
                frames
                    .iter()
                    .filter_map(|f| serde_json::from_str(&f.data).ok())
                    .collect(),
            ),
        };
        return (
            StatusCode::OK,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            whole.to_string(),
        )
            .into_response();
    }
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
fn usage(s: &Shared, wire: Wire, body: &Value, parsed: &Parsed, turn: &Turn) -> Usage {
    let estimate = turn.usage_for(&parsed.request);
    // Gemini's implicit cache is not played.
    let cached = match (&s.prompt_cache, wire) {
        (Some(cache), Wire::Api(api)) => {
            Some(cache.serve(api, &parsed.model, body, &parsed.request, Instant::now()))
        }
        _ => None,
    };
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

/// The model a Gemini path names (`/v1beta/models/{model}:{method}`); empty for other paths.
fn gemini_model(uri: &Uri) -> &str {
    uri.path()
        .strip_prefix("/v1beta/models/")
        .and_then(|call| call.rsplit_once(':'))
        .map_or("", |(model, _)| model)
}

/// Whether the answer is streamed as SSE: always for tether's formats; for Gemini's stream only
/// with `alt=sse`, as the API does.
fn sse_wanted(wire: Wire, uri: &Uri) -> bool {
    match wire {
        Wire::Api(_) => true,
        Wire::Gemini { stream } => stream && query_param(uri, "alt") == Some("sse"),
    }
}

/// The value of query parameter `name`, as sent.
fn query_param<'a>(uri: &'a Uri, name: &str) -> Option<&'a str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

fn error(api: Wire, status: StatusCode, message: &str) -> Response {
    let body = wire::error_body(api, status.as_u16(), message);
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}
