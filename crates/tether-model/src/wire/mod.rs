//! The three wire formats: request bodies out, SSE frames in.
//!
//! Each submodule maps the neutral [`crate::Request`] to one API's JSON and turns that API's
//! stream frames into [`crate::StreamEvent`]s; the request's tools are written here, in
//! [`request_body`], for all three, and so are Anthropic's prompt cache marks. Each body is
//! a pure function of its request, so a request that repeats an earlier one's beginning is sent
//! beginning with the same bytes, as providers' prompt caches need. The HTTP plumbing (retries, cancellation) is the
//! same for all three and lives in [`crate::http`]; only what differs lives here.

mod anthropic;
mod chat;
mod errors;
mod responses;
mod tool_calls;

use std::collections::VecDeque;

use serde_json::Value;
use tether_config::Api;

use crate::sse::SseFrame;
use crate::{ModelError, Request, StreamEvent, ToolSpec};

pub(crate) use errors::from_status;

/// The Anthropic API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The URL a request goes to, from the configured base URL.
///
/// OpenAI bases are used as given, `/v1` included, as every OpenAI-compatible client does
/// (`http://127.0.0.1:8080/v1` → `…/v1/chat/completions`, `…/v1/responses`). Anthropic bases
/// are written without `/v1` by convention (`https://api.anthropic.com`, as `ANTHROPIC_BASE_URL`
/// is), so `/v1/messages` is appended — unless the base already ends in `/v1`, then only
/// `/messages`. A trailing `/` is ignored in every case.
pub fn request_url(api: Api, base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    match api {
        Api::OpenAiChat => format!("{base}/chat/completions"),
        Api::OpenAiResponses => format!("{base}/responses"),
        Api::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
        Api::Anthropic => format!("{base}/v1/messages"),
    }
}

/// The JSON body for one streamed call: what differs per API from its module, the settings and
/// tools every API takes here.
pub(crate) fn request_body(api: Api, model: &str, request: &Request) -> Value {
    let mut body = match api {
        Api::OpenAiChat => chat::body(model, request),
        Api::OpenAiResponses => responses::body(model, request),
        Api::Anthropic => anthropic::body(model, request),
    };
    if let Some(temperature) = request.temperature {
        body["temperature"] = Value::from(temperature);
    }
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| tool_json(api, tool));
        body["tools"] = Value::Array(tools.collect());
    }
    // The OpenAI formats cache any long prefix they saw before, unmarked.
    if api == Api::Anthropic {
        anthropic::mark_cache(&mut body, request);
    }
    body
}

/// A tool's definition as `api` takes it: the one place a [`ToolSpec`] becomes wire JSON.
fn tool_json(api: Api, tool: &ToolSpec) -> Value {
    match api {
        Api::OpenAiChat => serde_json::json!({
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }),
        Api::OpenAiResponses => serde_json::json!({
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": false,
        }),
        Api::Anthropic => serde_json::json!({
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.parameters,
        }),
    }
}

/// A fresh stream parser for one response.
pub(crate) fn parser(api: Api) -> Box<dyn StreamParser> {
    match api {
        Api::OpenAiChat => Box::<chat::Parser>::default(),
        Api::OpenAiResponses => Box::<responses::Parser>::default(),
        Api::Anthropic => Box::<anthropic::Parser>::default(),
    }
}

/// Turns one API's SSE frames into [`StreamEvent`]s.
pub(crate) trait StreamParser: Send + Sync {
    /// Handles one frame, appending the events it yields. `Ok(true)` once the response is
    /// complete (its usage and `Done` have been appended); later frames are not read.
    fn frame(
        &mut self,
        frame: &SseFrame,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, ModelError>;

    /// The body ended without a completing frame: finish if the API allows it, else fail.
    fn end(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError>;
}

/// Parses a frame's JSON data, or says which frame was malformed.
fn json(frame: &SseFrame) -> Result<Value, ModelError> {
    serde_json::from_str(&frame.data).map_err(|err| ModelError::MalformedStream {
        detail: format!(
            "{} frame is not valid JSON ({err}): {}",
            frame.event.as_deref().unwrap_or("data"),
            preview(&frame.data)
        ),
    })
}

/// A typed frame's JSON data and its type: the SSE `event:` name, else the data's `type`.
fn typed(frame: &SseFrame) -> Result<(Value, String), ModelError> {
    let data = json(frame)?;
    let kind = frame
        .event
        .as_deref()
        .or_else(|| str_field(&data, "type"))
        .unwrap_or_default()
        .to_owned();
    Ok((data, kind))
}

fn preview(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The stream ended before the API's completing frame.
fn ended_early(what: &str) -> ModelError {
    ModelError::MalformedStream {
        detail: format!("the stream ended before {what}"),
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn u64_field(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Arguments to echo back in a tool-call history item: exactly what the model wrote when it is
/// valid JSON (so prompt caches keep hitting), `{}` when it was not (some servers reject
/// malformed arguments in history; the tool result already told the model what went wrong).
fn history_arguments(call: &crate::ToolCall) -> String {
    if call.raw_arguments.trim().is_empty() || call.arguments_error().is_some() {
        "{}".to_owned()
    } else {
        call.raw_arguments.clone()
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
