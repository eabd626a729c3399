//! Anthropic Messages, server side: `POST /v1/messages` as Claude Code sends it, and the
//! `message_start` … `message_stop` event sequence it accepts.

use serde_json::{Value, json};
use tether_model::scripted::Turn;
use tether_model::{Message, ToolCall, ToolSpec, Usage};

use super::{
    Frame, Parsed, RenderContext, content_text, halves, max_tokens, resolve_calls, str_of,
    temperature, text_chunks, tools,
};

pub(super) fn parse(body: &Value) -> Result<Parsed, String> {
    let mut parsed = Parsed::new(str_of(body, "model").unwrap_or_default().to_owned());
    let request = &mut parsed.request;
    request.system = body
        .get("system")
        .map(content_text)
        .filter(|s| !s.is_empty());
    request.max_tokens = max_tokens(body, &["max_tokens"]);
    request.temperature = temperature(body);
    for tool in tools(body) {
        // Server tools (web search, …) have no input_schema; the script cannot call them.
        if let (Some(name), Some(schema)) = (str_of(tool, "name"), tool.get("input_schema")) {
            request.tools.push(ToolSpec::new(
                name,
                str_of(tool, "description").unwrap_or_default(),
                schema.clone(),
            ));
        }
    }
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("`messages` must be an array")?;
    for message in messages {
        let role = str_of(message, "role").ok_or("a message has no `role`")?;
        let content = message.get("content").unwrap_or(&Value::Null);
        let blocks: Vec<Value> = match content {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => return Err(format!("a {role} message has no content")),
        };
        match role {
            "user" => parse_user(&blocks, &mut request.messages),
            "assistant" => request.messages.push(parse_assistant(&blocks)),
            // Claude Code sends part of its instructions as system-role messages; they join
            // the system prompt.
            "system" => {
                let text = content_text(content);
                request.system = Some(match request.system.take() {
                    Some(system) => format!("{system}\n\n{text}"),
                    None => text,
                });
            }
            other => return Err(format!("unknown role {other:?}")),
        }
    }
    Ok(parsed)
}

fn parse_user(blocks: &[Value], messages: &mut Vec<Message>) {
    for block in blocks {
        match str_of(block, "type") {
            Some("text") => messages.push(Message::user(str_of(block, "text").unwrap_or_default())),
            Some("tool_result") => messages.push(Message::Tool {
                tool_call_id: str_of(block, "tool_use_id").unwrap_or_default().to_owned(),
                content: block.get("content").map(content_text).unwrap_or_default(),
                is_error: block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            }),
            _ => {}
        }
    }
}

fn parse_assistant(blocks: &[Value]) -> Message {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match str_of(block, "type") {
            Some("text") => text.push_str(str_of(block, "text").unwrap_or_default()),
            Some("tool_use") => calls.push(ToolCall::new(
                str_of(block, "id").unwrap_or_default(),
                str_of(block, "name").unwrap_or_default(),
                block.get("input").cloned().unwrap_or(Value::Null),
            )),
            _ => {}
        }
    }
    Message::assistant_tool_calls(text, calls)
}

pub(super) fn render(turn: &Turn, context: &RenderContext<'_>) -> Vec<Frame> {
    let index = context.index;
    let mut frames = vec![
        Frame::named(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_{index}"),
                "type": "message",
                "role": "assistant",
                "model": context.parsed.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": fresh_input(&context.usage),
                    "cache_read_input_tokens": context.usage.cached_input_tokens,
                    "cache_creation_input_tokens": context.usage.cache_write_input_tokens,
                    "output_tokens": 1
                },
            }}),
        ),
        Frame::named("ping", &json!({"type": "ping"})),
    ];
    let mut block = 0;
    if let Some(text) = turn.text.as_deref().filter(|t| !t.is_empty()) {
        frames.push(block_start(block, json!({"type": "text", "text": ""})));
        for chunk in text_chunks(text) {
            frames.push(block_delta(
                block,
                json!({"type": "text_delta", "text": chunk}),
            ));
        }
        frames.push(block_stop(block));
        block += 1;
    }
    for (call_index, call) in resolve_calls(turn, context.parsed).iter().enumerate() {
        frames.push(block_start(
            block,
            json!({
                "type": "tool_use",
                "id": format!("toolu_{index}_{call_index}"),
                "name": call.name,
                "input": {},
            }),
        ));
        for part in halves(&call.arguments) {
            frames.push(block_delta(
                block,
                json!({"type": "input_json_delta", "partial_json": part}),
            ));
        }
        frames.push(block_stop(block));
        block += 1;
    }
    let stop_reason = if turn.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    frames.push(Frame::named(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": context.usage.output_tokens},
        }),
    ));
    frames.push(Frame::named(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    frames
}

/// Anthropic's `input_tokens`: the input neither read from the cache nor written to it.
fn fresh_input(usage: &Usage) -> u64 {
    usage
        .input_tokens
        .saturating_sub(usage.cached_input_tokens)
        .saturating_sub(usage.cache_write_input_tokens)
}

fn block_start(index: usize, content_block: Value) -> Frame {
    Frame::named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": content_block}),
    )
}

fn block_delta(index: usize, delta: Value) -> Frame {
    Frame::named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn block_stop(index: usize) -> Frame {
    Frame::named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    )
}

pub(super) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 | 503 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
