//! The Gemini API, server side: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` (and
//! `:generateContent`) as Gemini CLI sends it, and the `GenerateContentResponse` chunks it
//! accepts — each an SSE `data:` line of `{candidates: [{content: {role: "model", parts}}]}`, the
//! last with its `finishReason` and the `usageMetadata`.
//!
//! A request's `contents[]` are turns of role `user` or `model`, each a list of `parts`: `text`,
//! `functionCall` (`{name, args, id?}`) from the model, `functionResponse` (`{name, response,
//! id?}`) from the client. Calls and their responses are paired by `id` when the client sends
//! one, else by name in order, as the API itself does.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tether_model::scripted::Turn;
use tether_model::{Message, ToolCall, ToolSpec};

use super::{Frame, Parsed, RenderContext, content_text, resolve_calls, str_of, text_chunks};

/// Parses a request for `model` (named by its path, not its body).
pub(super) fn parse(body: &Value, model: &str) -> Result<Parsed, String> {
    let mut parsed = Parsed::new(model.to_owned());
    let request = &mut parsed.request;
    request.system = body
        .get("systemInstruction")
        .map(|instruction| match instruction.get("parts") {
            Some(parts) => content_text(parts),
            None => content_text(instruction),
        })
        .filter(|s| !s.is_empty());
    let config = body.get("generationConfig").unwrap_or(&Value::Null);
    if let Some(max) = config
        .get("maxOutputTokens")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
    {
        request.max_tokens = max;
    }
    request.temperature = config
        .get("temperature")
        .and_then(Value::as_f64)
        .map(|t| t as f32);
    for declaration in declarations(body) {
        if let Some(name) = str_of(declaration, "name") {
            let schema = declaration
                .get("parametersJsonSchema")
                .or_else(|| declaration.get("parameters"))
                .cloned()
                .unwrap_or(Value::Null);
            request.tools.push(ToolSpec::new(
                name,
                str_of(declaration, "description").unwrap_or_default(),
                schema,
            ));
        }
    }
    let contents = body
        .get("contents")
        .and_then(Value::as_array)
        .ok_or("`contents` must be an array")?;
    let mut ids = CallIds::default();
    for (turn, content) in contents.iter().enumerate() {
        let parts = content
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("contents[{turn}] has no `parts` array"))?;
        match str_of(content, "role").unwrap_or("user") {
            "user" => parse_user(parts, &mut ids, &mut request.messages),
            "model" => request.messages.push(parse_model(parts, &mut ids)),
            other => return Err(format!("contents[{turn}] has the unknown role {other:?}")),
        }
    }
    Ok(parsed)
}

/// Every `functionDeclarations` entry of the request's `tools`.
fn declarations(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
}

/// The ids of the calls in a conversation: the client's, or made up per name in order and
/// taken by the responses to that name in the same order.
#[derive(Default)]
struct CallIds {
    /// Calls of each name without an id of their own, not yet answered.
    unanswered: HashMap<String, Vec<String>>,
    made: usize,
}

impl CallIds {
    fn call(&mut self, name: &str, id: Option<&str>) -> String {
        if let Some(id) = id {
            return id.to_owned();
        }
        self.made += 1;
        let id = format!("gemini-call-{}", self.made);
        self.unanswered
            .entry(name.to_owned())
            .or_default()
            .push(id.clone());
        id
    }

    fn response(&mut self, name: &str, id: Option<&str>) -> String {
        if let Some(id) = id {
            return id.to_owned();
        }
        match self.unanswered.get_mut(name) {
            Some(waiting) if !waiting.is_empty() => waiting.remove(0),
            _ => format!("gemini-unmatched-{name}"),
        }
    }
}

fn parse_user(parts: &[Value], ids: &mut CallIds, messages: &mut Vec<Message>) {
    for part in parts {
        if let Some(text) = str_of(part, "text") {
            messages.push(Message::user(text));
        } else if let Some(response) = part.get("functionResponse") {
            let name = str_of(response, "name").unwrap_or_default();
            let id = ids.response(name, str_of(response, "id"));
            let body = response.get("response").unwrap_or(&Value::Null);
            let (content, is_error) = response_text(body);
            messages.push(Message::Tool {
                tool_call_id: id,
                content,
                is_error,
            });
        }
    }
}

/// What a `functionResponse.response` says: its `output` or `error` when it has one (the
/// API's own convention), else the whole object.
fn response_text(response: &Value) -> (String, bool) {
    let text = |value: &Value| match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(error) = response.get("error") {
        (text(error), true)
    } else if let Some(output) = response.get("output") {
        (text(output), false)
    } else {
        (text(response), false)
    }
}

fn parse_model(parts: &[Value], ids: &mut CallIds) -> Message {
    let mut text = String::new();
    let mut calls = Vec::new();
    for part in parts {
        // A thought is the model's own reasoning, not its answer.
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(t) = str_of(part, "text") {
            text.push_str(t);
        } else if let Some(call) = part.get("functionCall") {
            let name = str_of(call, "name").unwrap_or_default();
            let id = ids.call(name, str_of(call, "id"));
            let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
            calls.push(ToolCall::new(id, name, args));
        }
    }
    Message::assistant_tool_calls(text, calls)
}

/// The chunks that stream `turn`: its text a word at a time, then each call whole (the API
/// never splits a `functionCall`), the last chunk with `finishReason` and `usageMetadata`.
pub(super) fn render(turn: &Turn, context: &RenderContext<'_>) -> Vec<Frame> {
    let mut parts: Vec<Value> = Vec::new();
    if let Some(text) = turn.text.as_deref().filter(|t| !t.is_empty()) {
        parts.extend(text_chunks(text).into_iter().map(|t| json!({"text": t})));
    }
    for (n, call) in resolve_calls(turn, context.parsed).into_iter().enumerate() {
        let args: Value =
            serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::Object(Map::new()));
        parts.push(json!({"functionCall": {
            "id": format!("call_{}_{n}", context.index),
            "name": call.name,
            "args": args,
        }}));
    }
    if parts.is_empty() {
        parts.push(json!({"text": ""}));
    }
    let last = parts.len() - 1;
    parts
        .into_iter()
        .enumerate()
        .map(|(n, part)| {
            let mut candidate = json!({
                "content": {"role": "model", "parts": [part]},
                "index": 0,
            });
            let mut chunk = json!({
                "modelVersion": context.parsed.model,
                "responseId": format!("resp-{}", context.index),
            });
            if n == last {
                candidate["finishReason"] = json!("STOP");
                chunk["usageMetadata"] = usage_metadata(context);
            }
            chunk["candidates"] = json!([candidate]);
            Frame::data(chunk.to_string())
        })
        .collect()
}

/// The whole answer as one `GenerateContentResponse` (`:generateContent`): the chunks' parts
/// joined, with the last chunk's reason and usage.
pub(super) fn whole(frames: &[Frame]) -> Value {
    let mut parts = Vec::new();
    let mut last = Value::Null;
    for frame in frames {
        let Ok(chunk) = serde_json::from_str::<Value>(&frame.data) else {
            continue;
        };
        if let Some(more) = chunk
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
        {
            parts.extend(more.iter().cloned());
        }
        last = chunk;
    }
    if let Some(content) = last.pointer_mut("/candidates/0/content/parts") {
        *content = Value::Array(parts);
    }
    last
}

fn usage_metadata(context: &RenderContext<'_>) -> Value {
    let usage = context.usage;
    json!({
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "cachedContentTokenCount": usage.cached_input_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    })
}

/// The API's error body: `{error: {code, message, status}}`.
pub(super) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        500..=599 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    };
    json!({"error": {"code": status, "message": message, "status": kind}})
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tether_model::scripted::Turn;
    use tether_model::{Message, Usage};

    use super::super::RenderContext;
    use super::*;

    fn request() -> Value {
        json!({
            "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
            "generationConfig": {"temperature": 0.5, "maxOutputTokens": 512},
            "tools": [{"functionDeclarations": [
                {"name": "read_file", "description": "Reads a file",
                 "parametersJsonSchema": {"type": "object"}},
                {"name": "ask_human", "description": "Asks",
                 "parameters": {"type": "OBJECT"}},
            ]}],
            "contents": [
                {"role": "user", "parts": [{"text": "Read it."}]},
                {"role": "model", "parts": [
                    {"text": "Thinking aloud", "thought": true},
                    {"text": "Reading."},
                    {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "read_file", "response": {"output": "hello"}}},
                ]},
                {"role": "model", "parts": [
                    {"functionCall": {"id": "x1", "name": "ask_human", "args": {}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "x1", "name": "ask_human",
                     "response": {"error": "no"}}},
                ]},
            ],
        })
    }

    #[test]
    fn a_request_becomes_the_neutral_conversation_with_calls_paired_to_their_responses() {
        let parsed = parse(&request(), "gemini-2.5-pro").unwrap();
        let r = &parsed.request;
        assert_eq!(parsed.model, "gemini-2.5-pro");
        assert_eq!(r.system.as_deref(), Some("Be brief."));
        assert_eq!(r.max_tokens, 512);
        assert_eq!(r.temperature, Some(0.5));
        let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read_file", "ask_human"]);
        assert_eq!(r.messages.len(), 5);
        assert_eq!(r.messages[0], Message::user("Read it."));
        let Message::Assistant { text, tool_calls } = &r.messages[1] else {
            panic!("{:?}", r.messages[1]);
        };
        assert_eq!(text, "Reading.");
        assert_eq!(tool_calls[0].name, "read_file");
        let Message::Tool {
            tool_call_id,
            content,
            is_error,
        } = &r.messages[2]
        else {
            panic!("{:?}", r.messages[2]);
        };
        assert_eq!(tool_call_id, &tool_calls[0].id);
        assert_eq!((content.as_str(), *is_error), ("hello", false));
        assert_eq!(r.last_tool_result(), Some((Some("ask_human"), "no")));
    }

    #[test]
    fn a_request_without_contents_or_with_an_unknown_role_is_refused() {
        assert!(parse(&json!({}), "m").unwrap_err().contains("contents"));
        let odd = json!({"contents": [{"role": "tool", "parts": []}]});
        assert!(parse(&odd, "m").unwrap_err().contains("contents[0]"));
    }

    fn rendered(turn: &Turn) -> Vec<Value> {
        let parsed = parse(&request(), "gemini-2.5-pro").unwrap();
        let context = RenderContext {
            index: 3,
            parsed: &parsed,
            usage: Usage {
                input_tokens: 40,
                output_tokens: 7,
                ..Usage::default()
            },
        };
        render(turn, &context)
            .iter()
            .map(|f| {
                assert!(f.event.is_none(), "Gemini's chunks are bare data lines");
                serde_json::from_str(&f.data).unwrap()
            })
            .collect()
    }

    #[test]
    fn text_streams_in_chunks_and_the_last_carries_the_reason_and_usage() {
        let chunks = rendered(&Turn::text("All done now"));
        assert_eq!(chunks.len(), 3);
        let text: String = chunks
            .iter()
            .map(|c| {
                c["candidates"][0]["content"]["parts"][0]["text"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(text, "All done now");
        assert!(chunks[0]["candidates"][0].get("finishReason").is_none());
        assert!(chunks[0].get("usageMetadata").is_none());
        let last = &chunks[2];
        assert_eq!(last["candidates"][0]["content"]["role"], "model");
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(last["usageMetadata"]["promptTokenCount"], 40);
        assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 7);
    }

    #[test]
    fn a_call_is_sent_whole_with_its_arguments_as_an_object() {
        let chunks = rendered(&Turn::tool("ask_human", json!({"question": "Which?"})));
        assert_eq!(chunks.len(), 1);
        let call = &chunks[0]["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(call["name"], "ask_human");
        assert_eq!(call["args"], json!({"question": "Which?"}));
        assert_eq!(call["id"], "call_3_0");
        assert_eq!(chunks[0]["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn the_whole_answer_joins_the_chunks_parts() {
        let parsed = parse(&request(), "m").unwrap();
        let context = RenderContext {
            index: 0,
            parsed: &parsed,
            usage: Usage::default(),
        };
        let frames = render(&Turn::text("a b c"), &context);
        let whole = whole(&frames);
        assert_eq!(
            whole["candidates"][0]["content"]["parts"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(whole["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn errors_carry_the_apis_status_names() {
        let body = error_body(401, "bad key");
        assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
        assert_eq!(body["error"]["code"], 401);
        assert_eq!(
            error_body(429, "slow")["error"]["status"],
            "RESOURCE_EXHAUSTED"
        );
    }
}
