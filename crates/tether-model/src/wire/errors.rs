//! Mapping endpoint failures (HTTP statuses, error bodies, in-stream error events) to
//! [`ModelError`] kinds, by status and by the APIs' documented error codes — never by guessing
//! at free text, except for the one case APIs do not code: an over-long prompt.

use std::time::Duration;

use serde_json::Value;

use crate::ModelError;

/// The error for a non-success HTTP response. `body` is the (bounded) response body.
pub(crate) fn from_status(status: u16, retry_after: Option<Duration>, body: &str) -> ModelError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let (code, message) = match &parsed {
        Some(value) => error_code_and_message(value),
        None => (None, None),
    };
    let message = message.unwrap_or_else(|| body.trim().to_owned());
    let message = if message.is_empty() {
        format!("HTTP {status} with no explanation")
    } else {
        message
    };
    if is_context_error(code.as_deref(), &message) && matches!(status, 400 | 413 | 422) {
        return ModelError::ContextTooLong { message };
    }
    match status {
        401 | 403 => ModelError::Auth { status, message },
        429 => ModelError::RateLimited { retry_after },
        408 => ModelError::Transport {
            detail: format!("the endpoint timed out the request (HTTP 408): {message}"),
        },
        413 => ModelError::ContextTooLong { message },
        500..=599 => ModelError::Server {
            status: Some(status),
            message,
        },
        _ => ModelError::BadRequest { status, message },
    }
}

/// The error for an error event inside a stream (Anthropic `error`, Responses `error` or
/// `response.failed`, a Chat chunk with an `error` object).
pub(crate) fn from_stream_error(value: &Value) -> ModelError {
    let (code, message) = error_code_and_message(value);
    let code = code.unwrap_or_default();
    let message = message.unwrap_or_else(|| value.to_string());
    match code.as_str() {
        "rate_limit_error" | "rate_limit_exceeded" => ModelError::RateLimited { retry_after: None },
        "context_length_exceeded" => ModelError::ContextTooLong { message },
        "authentication_error" | "permission_error" | "invalid_api_key" => ModelError::Auth {
            status: 401,
            message,
        },
        _ if is_context_error(Some(&code), &message) => ModelError::ContextTooLong { message },
        "invalid_request_error" | "invalid_prompt" | "not_found_error" => ModelError::BadRequest {
            status: 400,
            message,
        },
        _ => ModelError::Server {
            status: None,
            message: if code.is_empty() {
                message
            } else {
                format!("{code}: {message}")
            },
        },
    }
}

/// `(code or type, message)` from `{"error":{…}}`, `{"type":"error","error":{…}}`,
/// `{"response":{"error":{…}}}` or a bare `{"code","message"}`.
fn error_code_and_message(value: &Value) -> (Option<String>, Option<String>) {
    let error = value
        .get("response")
        .and_then(|response| response.get("error"))
        .or_else(|| value.get("error"))
        .unwrap_or(value);
    if let Some(text) = error.as_str() {
        return (None, Some(text.to_owned()));
    }
    let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::to_owned);
    let code = text("code")
        .or_else(|| text("type"))
        .filter(|code| code != "error");
    (code, text("message"))
}

fn is_context_error(code: Option<&str>, message: &str) -> bool {
    if matches!(code, Some("context_length_exceeded")) {
        return true;
    }
    let message = message.to_ascii_lowercase();
    [
        "prompt is too long",
        "context length",
        "context window",
        "too many tokens",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}
