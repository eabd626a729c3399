//! OpenAI Responses (`POST {base}/responses`), as Codex speaks it.
//!
//! Out: `instructions`, an `input` list of `message`, `function_call` and
//! `function_call_output` items, tools as flat `{"type":"function",name,…,"strict":false}`
//! (the API defaults `strict` to true, which would reject ordinary schemas), `store: false`.
//! In: `response.created`, optional `response.output_item.added`,
//! `response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.output_item.done` (authoritative for text and arguments), then
//! `response.completed` — or `response.incomplete`, `response.failed`, `error`.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Value, json};

use super::tool_calls::ToolCalls;
use super::{StreamParser, ended_early, errors, history_arguments, str_field, typed, u64_field};
use crate::sse::SseFrame;
use crate::{Message, ModelError, Request, StopReason, StreamEvent, Usage};

pub(super) fn body(model: &str, request: &Request) -> Value {
    let text_item = |role: &str, kind: &str, text: &str| json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]});
    let mut input = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            Message::System { text } => input.push(text_item("system", "input_text", text)),
            Message::User { text } => input.push(text_item("user", "input_text", text)),
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    input.push(text_item("assistant", "output_text", text));
                }
                for call in tool_calls {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": history_arguments(call),
                    }));
                }
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => input.push(json!({
                "type": "function_call_output", "call_id": tool_call_id, "output": content,
            })),
        }
    }
    let mut body = json!({
        "model": model,
        "input": input,
        "stream": true,
        "store": false,
        "max_output_tokens": request.max_tokens,
    });
    if let Some(system) = &request.system {
        body["instructions"] = Value::from(system.as_str());
    }
    body
}

/// Responses stream state.
#[derive(Debug, Default)]
pub(super) struct Parser {
    calls: ToolCalls,
    /// Keys (`id:<item id>`, `at:<output index>`) of message items whose text was streamed
    /// as deltas, so their `output_item.done` does not repeat it.
    streamed: HashSet<String>,
    /// Text deltas arrived without any key to tie them to an item.
    streamed_unkeyed: bool,
    /// Item keys (`id:…`, `at:…`) of function calls → tool-call index, for argument deltas.
    call_items: HashMap<String, usize>,
}

fn item_keys(id: Option<&str>, output_index: Option<u64>) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(id) = id {
        keys.push(format!("id:{id}"));
    }
    if let Some(at) = output_index {
        keys.push(format!("at:{at}"));
    }
    keys
}

impl Parser {
    /// The tool-call index for a function-call item, starting it if new.
    fn call_for(&mut self, item: &Value, out: &mut VecDeque<StreamEvent>) -> usize {
        let call_id = str_field(item, "call_id")
            .or_else(|| str_field(item, "id"))
            .unwrap_or_default();
        match self.calls.index_of(call_id) {
            Some(index) => index,
            None => {
                let name = str_field(item, "name").unwrap_or_default().to_owned();
                self.calls
                    .start(call_id.to_owned(), call_id.to_owned(), name, out)
            }
        }
    }

    /// The call an arguments delta belongs to: by item id, else by output index.
    fn call_for_delta(&self, data: &Value) -> Option<usize> {
        item_keys(
            str_field(data, "item_id"),
            data.get("output_index").and_then(Value::as_u64),
        )
        .iter()
        .find_map(|key| self.call_items.get(key).copied())
    }

    fn output_item_done(&mut self, data: &Value, out: &mut VecDeque<StreamEvent>) {
        let item = data.get("item").unwrap_or(&Value::Null);
        let output_index = data.get("output_index").and_then(Value::as_u64);
        match str_field(item, "type") {
            Some("message") => {
                let keys = item_keys(str_field(item, "id"), output_index);
                let streamed = keys.iter().any(|key| self.streamed.contains(key))
                    || (keys.is_empty() && self.streamed_unkeyed);
                if streamed {
                    return;
                }
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if str_field(part, "type") == Some("output_text")
                        && let Some(text) = str_field(part, "text").filter(|t| !t.is_empty())
                    {
                        out.push_back(StreamEvent::TextDelta(text.to_owned()));
                    }
                }
            }
            Some("function_call") => {
                let index = self.call_for(item, out);
                let arguments = str_field(item, "arguments").unwrap_or_default();
                if self.calls.raw(index).is_empty() {
                    self.calls.delta(index, arguments, out);
                }
                self.calls.finish(index, out);
            }
            _ => {}
        }
    }

    fn complete(&mut self, data: &Value, stop_reason: StopReason, out: &mut VecDeque<StreamEvent>) {
        self.calls.finish_all(out);
        let usage = data
            .pointer("/response/usage")
            .map(|usage| Usage {
                input_tokens: u64_field(usage, "input_tokens"),
                cached_input_tokens: usage
                    .pointer("/input_tokens_details/cached_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                // Automatic caching: the OpenAI formats report no writes.
                cache_write_input_tokens: 0,
                output_tokens: u64_field(usage, "output_tokens"),
            })
            .unwrap_or_default();
        out.push_back(StreamEvent::Usage(usage));
        out.push_back(StreamEvent::Done { stop_reason });
    }
}

impl StreamParser for Parser {
    fn frame(
        &mut self,
        frame: &SseFrame,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, ModelError> {
        let (data, kind) = typed(frame)?;
        match kind.as_str() {
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                if str_field(item, "type") == Some("function_call") {
                    let index = self.call_for(item, out);
                    // Remember the item's other handles for the argument deltas.
                    let output_index = data.get("output_index").and_then(Value::as_u64);
                    for key in item_keys(str_field(item, "id"), output_index) {
                        self.call_items.insert(key, index);
                    }
                }
            }
            "response.output_text.delta" => {
                let keys = item_keys(
                    str_field(&data, "item_id"),
                    data.get("output_index").and_then(Value::as_u64),
                );
                if keys.is_empty() {
                    self.streamed_unkeyed = true;
                }
                self.streamed.extend(keys);
                if let Some(delta) = str_field(&data, "delta").filter(|d| !d.is_empty()) {
                    out.push_back(StreamEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(index), Some(delta)) =
                    (self.call_for_delta(&data), str_field(&data, "delta"))
                {
                    self.calls.delta(index, delta, out);
                }
            }
            "response.output_item.done" => self.output_item_done(&data, out),
            "response.completed" => {
                let stop = if self.calls.any() {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                };
                self.complete(&data, stop, out);
                return Ok(true);
            }
            "response.incomplete" => {
                let stop = match data
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some("content_filter") => StopReason::ContentFilter,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None => StopReason::Other("incomplete".to_owned()),
                };
                self.complete(&data, stop, out);
                return Ok(true);
            }
            "response.failed" | "error" => return Err(errors::from_stream_error(&data)),
            _ => {}
        }
        Ok(false)
    }

    fn end(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError> {
        Err(ended_early("response.completed arrived"))
    }
}
