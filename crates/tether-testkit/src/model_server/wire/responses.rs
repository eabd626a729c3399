//! OpenAI Responses, server side: `POST /v1/responses` as Codex sends it (namespaced MCP tools
//! included), and the `response.created` … `response.completed` events it accepts: a message
//! is announced (`response.output_item.added`), streamed as deltas, then finished.

use serde_json::{Value, json};
use tether_model::scripted::Turn;
use tether_model::{Message, ToolCall, ToolSpec};

use super::{
    Frame, Parsed, RenderContext, content_text, max_tokens, resolve_calls, str_of, temperature,
    text_chunks, tools,
};

pub(super) fn parse(body: &Value) -> Result<Parsed, String> {
    let mut parsed = Parsed::new(str_of(body, "model").unwrap_or_default().to_owned());
    parsed.request.system = str_of(body, "instructions").map(str::to_owned);
    parsed.request.max_tokens = max_tokens(body, &["max_output_tokens"]);
    parsed.request.temperature = temperature(body);
    for tool in tools(body) {
        match str_of(tool, "type") {
            Some("function") => {
                if let Some(spec) = function_spec(tool, None) {
                    parsed.request.tools.push(spec);
                }
            }
            Some("namespace") => {
                let namespace = str_of(tool, "name").unwrap_or_default();
                for inner in tools(tool) {
                    if let Some(spec) = function_spec(inner, Some(namespace)) {
                        let name = str_of(inner, "name").unwrap_or_default().to_owned();
                        parsed
                            .namespaces
                            .insert(spec.name.clone(), (namespace.to_owned(), name));
                        parsed.request.tools.push(spec);
                    }
                }
            }
            _ => {}
        }
    }
    match body.get("input") {
        Some(Value::String(text)) => parsed.request.messages.push(Message::user(text.clone())),
        Some(Value::Array(items)) => {
            for item in items {
                parse_item(item, &mut parsed.request.messages)?;
            }
        }
        _ => return Err("`input` must be a string or an array".to_owned()),
    }
    Ok(parsed)
}

/// A function tool; inside a namespace its flat name is `<namespace>__<name>`.
fn function_spec(tool: &Value, namespace: Option<&str>) -> Option<ToolSpec> {
    let name = str_of(tool, "name")?;
    let name = match namespace {
        Some(namespace) => format!("{namespace}__{name}"),
        None => name.to_owned(),
    };
    Some(ToolSpec::new(
        name,
        str_of(tool, "description").unwrap_or_default(),
        tool.get("parameters").cloned().unwrap_or(Value::Null),
    ))
}

fn parse_item(item: &Value, messages: &mut Vec<Message>) -> Result<(), String> {
    let kind = str_of(item, "type").unwrap_or("message");
    match kind {
        "message" => {
            let text = item.get("content").map(content_text).unwrap_or_default();
            match str_of(item, "role").ok_or("a message item has no `role`")? {
                "user" => messages.push(Message::user(text)),
                "assistant" => messages.push(Message::assistant(text)),
                "system" | "developer" => messages.push(Message::system(text)),
                other => return Err(format!("unknown role {other:?}")),
            }
        }
        "function_call" => {
            let name = match str_of(item, "namespace") {
                Some(namespace) => {
                    format!("{namespace}__{}", str_of(item, "name").unwrap_or_default())
                }
                None => str_of(item, "name").unwrap_or_default().to_owned(),
            };
            let call = ToolCall::from_raw(
                str_of(item, "call_id").unwrap_or_default(),
                name,
                str_of(item, "arguments").unwrap_or_default(),
            );
            // Calls following an assistant message belong to it.
            match messages.last_mut() {
                Some(Message::Assistant { tool_calls, .. }) => tool_calls.push(call),
                _ => messages.push(Message::assistant_tool_calls("", vec![call])),
            }
        }
        "function_call_output" => messages.push(Message::tool_result(
            str_of(item, "call_id").unwrap_or_default(),
            item.get("output").map(content_text).unwrap_or_default(),
        )),
        _ => {}
    }
    Ok(())
}

pub(super) fn render(turn: &Turn, context: &RenderContext<'_>) -> Vec<Frame> {
    let index = context.index;
    let response_id = format!("resp_{index}");
    let model = &context.parsed.model;
    let mut frames = vec![Frame::named(
        "response.created",
        &json!({"type": "response.created", "response": {
            "id": response_id, "object": "response", "status": "in_progress", "model": model,
            "output": [],
        }}),
    )];
    let mut output = Vec::new();
    if let Some(text) = turn.text.as_deref().filter(|t| !t.is_empty()) {
        let item_id = format!("msg_{index}");
        // The item is announced before its deltas, as the real endpoint does (Codex drops
        // deltas of an item it was not told about).
        frames.push(Frame::named(
            "response.output_item.added",
            &json!({
                "type": "response.output_item.added",
                "output_index": output.len(),
                "item": {"type": "message", "id": item_id, "status": "in_progress",
                         "role": "assistant", "content": []},
            }),
        ));
        for chunk in text_chunks(text) {
            frames.push(Frame::named(
                "response.output_text.delta",
                &json!({
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": output.len(),
                    "content_index": 0,
                    "delta": chunk,
                }),
            ));
        }
        output.push(json!({
            "type": "message", "id": item_id, "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }));
    }
    for (call_index, call) in resolve_calls(turn, context.parsed).iter().enumerate() {
        let mut item = json!({
            "type": "function_call",
            "id": format!("fc_{index}_{call_index}"),
            "status": "completed",
            "call_id": format!("call_{index}_{call_index}"),
            "name": call.name,
            "arguments": call.arguments,
        });
        if let Some(namespace) = &call.namespace {
            item["namespace"] = Value::from(namespace.as_str());
        }
        output.push(item);
    }
    for (output_index, item) in output.iter().enumerate() {
        frames.push(Frame::named(
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": output_index, "item": item}),
        ));
    }
    let usage = context.usage;
    frames.push(Frame::named(
        "response.completed",
        &json!({"type": "response.completed", "response": {
            "id": response_id, "object": "response", "status": "completed", "model": model,
            "output": output,
            "usage": {
                "input_tokens": usage.input_tokens,
                "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total(),
            },
        }}),
    ));
    frames
}
