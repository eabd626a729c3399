//! The fake server's side of the wire formats — tether's three [`Api`]s and Gemini's
//! ([`Wire`]): request JSON in (parsed into the neutral [`Request`] a
//! [`tether_model::scripted::Script`] reads), SSE frames out.
//!
//! The frames follow what the providers' documented streaming formats send, so a
//! test passing here means the client speaks the format the real endpoints speak — not merely
//! the format this crate's own client expects.

mod anthropic;
mod chat;
mod gemini;
mod responses;

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;
use tether_config::Api;
use tether_model::scripted::{Turn, resolve_tool_name};
use tether_model::{Request, Usage};

/// A wire format the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// One of the formats tether's own model client speaks.
    Api(Api),
    /// The Gemini API's `generateContent`, streamed (`:streamGenerateContent?alt=sse`) or not.
    Gemini {
        /// Whether the answer is streamed.
        stream: bool,
    },
}

/// A request parsed from one of the wire formats.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    /// The neutral request the script sees.
    pub(crate) request: Request,
    /// The `model` the client asked for (echoed in responses).
    pub(crate) model: String,
    /// Chat Completions only: whether `stream_options.include_usage` was set.
    pub(crate) include_usage: bool,
    /// Responses only: flat tool name (`<namespace>__<name>`) → (namespace, name).
    pub(crate) namespaces: HashMap<String, (String, String)>,
}

impl Parsed {
    fn new(model: String) -> Self {
        Self {
            request: Request::new(Vec::new()),
            model,
            include_usage: false,
            namespaces: HashMap::new(),
        }
    }
}

/// One SSE frame to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
}

impl Frame {
    fn named(event: &str, data: &Value) -> Self {
        Self {
            event: Some(event.to_owned()),
            data: data.to_string(),
        }
    }

    fn data(data: impl Into<String>) -> Self {
        Self {
            event: None,
            data: data.into(),
        }
    }

    /// The frame's bytes: `event: X\ndata: {json}\n\n`, or `data: …\n\n` without a name.
    pub(crate) fn encode(&self) -> Bytes {
        let mut text = String::with_capacity(self.data.len() + 32);
        if let Some(event) = &self.event {
            text.push_str("event: ");
            text.push_str(event);
            text.push('\n');
        }
        text.push_str("data: ");
        text.push_str(&self.data);
        text.push_str("\n\n");
        Bytes::from(text)
    }

    /// The same frame with its JSON cut in half: a malformed frame.
    pub(crate) fn truncated(&self) -> Self {
        let cut = self
            .data
            .char_indices()
            .map(|(at, _)| at)
            .nth(self.data.chars().count() / 2)
            .unwrap_or(0)
            .max(1)
            .min(self.data.len());
        let data = if self.data.starts_with('{') {
            self.data[..cut].to_owned()
        } else {
            "{\"truncated\": ".to_owned()
        };
        Self {
            event: self.event.clone(),
            data,
        }
    }
}

/// What rendering a turn needs besides the turn.
pub(crate) struct RenderContext<'a> {
    /// The request's index, used to make ids unique and deterministic.
    pub(crate) index: usize,
    pub(crate) parsed: &'a Parsed,
    pub(crate) usage: Usage,
}

/// A scripted tool call resolved against the request's tools.
struct ResolvedCall {
    /// The name to send (for a namespaced Responses tool, the inner name).
    name: String,
    /// The Responses namespace, when the tool was offered inside one.
    namespace: Option<String>,
    /// The arguments as JSON text.
    arguments: String,
}

fn resolve_calls(turn: &Turn, parsed: &Parsed) -> Vec<ResolvedCall> {
    turn.tool_calls
        .iter()
        .map(|(name, arguments)| {
            let flat = resolve_tool_name(name, &parsed.request.tools);
            let (namespace, name) = match parsed.namespaces.get(flat) {
                Some((namespace, inner)) => (Some(namespace.clone()), inner.clone()),
                None => (None, flat.to_owned()),
            };
            ResolvedCall {
                name,
                namespace,
                arguments: arguments.to_string(),
            }
        })
        .collect()
}

/// Parses a request body in the given format; `model` is the one its path names (Gemini's).
pub(crate) fn parse(wire: Wire, body: &Value, model: &str) -> Result<Parsed, String> {
    if !body.is_object() {
        return Err("the request body is not a JSON object".to_owned());
    }
    match wire {
        Wire::Api(Api::OpenAiChat) => chat::parse(body),
        Wire::Api(Api::OpenAiResponses) => responses::parse(body),
        Wire::Api(Api::Anthropic) => anthropic::parse(body),
        Wire::Gemini { .. } => gemini::parse(body, model),
    }
}

/// The frames that stream `turn` in the given format.
pub(crate) fn render(wire: Wire, turn: &Turn, context: &RenderContext<'_>) -> Vec<Frame> {
    match wire {
        Wire::Api(Api::OpenAiChat) => chat::render(turn, context),
        Wire::Api(Api::OpenAiResponses) => responses::render(turn, context),
        Wire::Api(Api::Anthropic) => anthropic::render(turn, context),
        Wire::Gemini { .. } => gemini::render(turn, context),
    }
}

/// The answer of a format that does not stream (Gemini's `:generateContent`): `frames` as one
/// JSON body.
pub(crate) fn whole(frames: &[Frame]) -> Value {
    gemini::whole(frames)
}

/// The error body the format's real endpoint sends with `status`.
pub(crate) fn error_body(wire: Wire, status: u16, message: &str) -> Value {
    match wire {
        Wire::Api(Api::Anthropic) => anthropic::error_body(status, message),
        Wire::Api(Api::OpenAiChat | Api::OpenAiResponses) => chat::error_body(status, message),
        Wire::Gemini { .. } => gemini::error_body(status, message),
    }
}

/// Text cut into word-sized deltas, so clients must concatenate.
fn text_chunks(text: &str) -> Vec<&str> {
    text.split_inclusive(' ').collect()
}

/// JSON text cut in two at a character boundary, so clients must join argument fragments.
fn halves(text: &str) -> [&str; 2] {
    let middle = text
        .char_indices()
        .map(|(at, _)| at)
        .nth(text.chars().count() / 2)
        .unwrap_or(text.len());
    let (a, b) = text.split_at(middle);
    [a, b]
}

/// A message `content`: a string, or a list of parts whose `text` fields are joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The request's `tools` (a namespace's, for the Responses API), none when it has none.
fn tools(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn max_tokens(body: &Value, keys: &[&str]) -> u32 {
    keys.iter()
        .find_map(|key| body.get(*key).and_then(Value::as_u64))
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(Request::DEFAULT_MAX_TOKENS)
}

fn temperature(body: &Value) -> Option<f32> {
    body.get("temperature")
        .and_then(Value::as_f64)
        .map(|t| t as f32)
}
