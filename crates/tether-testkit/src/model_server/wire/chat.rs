//! OpenAI Chat Completions, server side: `POST /v1/chat/completions` as pi sends it, and the
//! `chat.completion.chunk` data lines, usage chunk and `[DONE]` it accepts.

use serde_json::{Value, json};
use tether_model::scripted::Turn;
use tether_model::{Message, ToolCall, ToolSpec};

use super::{
    Frame, Parsed, RenderContext, content_text, halves, max_tokens, resolve_calls, str_of,
    temperature, text_chunks, tools,
};

/// `created` in every chunk: fixed so recorded streams are reproducible.
const CREATED: u64 = 1_700_000_000;

pub(super) fn parse(body: &Value) -> Result<Parsed, String> {
    let mut parsed = Parsed::new(str_of(body, "model").unwrap_or_default().to_owned());
    parsed.include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let request = &mut parsed.request;
    request.max_tokens = max_tokens(body, &["max_tokens", "max_completion_tokens"]);
    request.temperature = temperature(body);
    for tool in tools(body) {
        let function = tool.get("function").unwrap_or(&Value::Null);
        if let Some(name) = str_of(function, "name") {
            request.tools.push(ToolSpec::new(
                name,
                str_of(function, "description").unwrap_or_default(),
                function.get("parameters").cloned().unwrap_or(Value::Null),
            ));
        }
    }
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("`messages` must be an array")?;
    for message in messages {
        let content = message.get("content").map(content_text).unwrap_or_default();
        match str_of(message, "role").ok_or("a message has no `role`")? {
            // Leading system messages are the system prompt; later ones stay in place.
            "system" | "developer" if request.messages.is_empty() => match &mut request.system {
                Some(system) => {
                    system.push_str("\n\n");
                    system.push_str(&content);
                }
                None => request.system = Some(content),
            },
            "system" | "developer" => request.messages.push(Message::system(content)),
            "user" => request.messages.push(Message::user(content)),
            "assistant" => {
                let calls = message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|call| {
                        let function = call.get("function").unwrap_or(&Value::Null);
                        ToolCall::from_raw(
                            str_of(call, "id").unwrap_or_default(),
                            str_of(function, "name").unwrap_or_default(),
                            str_of(function, "arguments").unwrap_or_default(),
                        )
                    })
                    .collect();
                request
                    .messages
                    .push(Message::assistant_tool_calls(content, calls));
            }
            "tool" => request.messages.push(Message::tool_result(
                str_of(message, "tool_call_id").unwrap_or_default(),
                content,
            )),
            other => return Err(format!("unknown role {other:?}")),
        }
    }
    Ok(parsed)
}

pub(super) fn render(turn: &Turn, context: &RenderContext<'_>) -> Vec<Frame> {
    let id = format!("chatcmpl-{}", context.index);
    let chunk = |choices: Value| {
        Frame::data(
            json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": context.parsed.model,
                "choices": choices,
            })
            .to_string(),
        )
    };
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
    let mut frames = vec![delta(json!({"role": "assistant", "content": ""}))];
    if let Some(text) = turn.text.as_deref().filter(|t| !t.is_empty()) {
        for piece in text_chunks(text) {
            frames.push(delta(json!({"content": piece})));
        }
    }
    for (call_index, call) in resolve_calls(turn, context.parsed).iter().enumerate() {
        frames.push(delta(json!({"tool_calls": [{
            "index": call_index,
            "id": format!("call_{}_{call_index}", context.index),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]})));
        for part in halves(&call.arguments) {
            frames.push(delta(json!({"tool_calls": [{
                "index": call_index,
                "function": {"arguments": part},
            }]})));
        }
    }
    let finish_reason = if turn.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    frames.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish_reason}]),
    ));
    if context.parsed.include_usage {
        let usage = context.usage;
        let mut last = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": context.parsed.model,
            "choices": [],
        });
        last["usage"] = json!({
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
            "total_tokens": usage.total(),
        });
        frames.push(Frame::data(last.to_string()));
    }
    frames.push(Frame::data("[DONE]"));
    frames
}

/// OpenAI's error body (also used for Responses).
pub(super) fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        401 => ("invalid_request_error", "invalid_api_key"),
        403 => (
            "invalid_request_error",
            "unsupported_country_region_territory",
        ),
        404 => ("invalid_request_error", "model_not_found"),
        429 => ("requests", "rate_limit_exceeded"),
        500..=599 => ("server_error", "server_error"),
        _ => ("invalid_request_error", "invalid_request"),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}
