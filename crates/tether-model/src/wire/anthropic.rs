//! Anthropic Messages (`POST …/v1/messages`), as Claude Code speaks it.
//!
//! Out: a top-level `system` (one text block), `messages` whose content is always a list of
//! blocks (`text`, `tool_use{id,name,input}`, `tool_result{tool_use_id,content,is_error}`),
//! consecutive messages of one role merged (the API wants user/assistant alternation and tool
//! results in a user message), tools as `{name,description,input_schema}`. In: `message_start`,
//! `content_block_start|delta|stop`, `message_delta`, `message_stop`, plus `ping` and `error`;
//! the usage splits input into fresh tokens, cache reads and cache writes.
//!
//! Prompt caching: Anthropic caches only what a request marks, and a marked prefix (tools, then
//! system, then messages, up to a block with `cache_control`) is read back by a later request
//! that begins with the same bytes. [`mark_cache`] marks the last tool, the system block and,
//! unless the request is one-shot ([`Request::cache_conversation`]), the newest message's last
//! block: a rolling mark, so each call of a conversation reads everything before it from the
//! cache. Three marks, of the four the API allows.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value, json};

use super::tool_calls::ToolCalls;
use super::{StreamParser, ended_early, errors, str_field, typed, u64_field};
use crate::sse::SseFrame;
use crate::{Message, ModelError, Request, StopReason, StreamEvent, Usage};

pub(super) fn body(model: &str, request: &Request) -> Value {
    let mut system: Vec<&str> = request.system.iter().map(String::as_str).collect();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            Message::System { text } => {
                system.push(text);
                continue;
            }
            Message::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = if call.arguments.is_object() {
                        call.arguments.clone()
                    } else {
                        Value::Object(Map::new())
                    };
                    blocks.push(json!({
                        "type": "tool_use", "id": call.id, "name": call.name, "input": input,
                    }));
                }
                ("assistant", blocks)
            }
            Message::Tool {
                tool_call_id,
                content,
                is_error,
            } => {
                let mut block = json!({
                    "type": "tool_result", "tool_use_id": tool_call_id, "content": content,
                });
                if *is_error {
                    block["is_error"] = Value::Bool(true);
                }
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!([{"type": "text", "text": system.join("\n\n")}]);
    }
    body
}

/// Marks the cache breakpoints of a whole body (its `tools` included): the last tool, the last
/// system block and, when the request's conversation is cached, the newest message's last block.
pub(super) fn mark_cache(body: &mut Value, request: &Request) {
    mark(last_of(body, "/tools"));
    mark(last_of(body, "/system"));
    if request.cache_conversation {
        let content = last_of(body, "/messages").and_then(|message| message.get_mut("content"));
        mark(
            content
                .and_then(Value::as_array_mut)
                .and_then(|b| b.last_mut()),
        );
    }
}

/// The last item of the list at `pointer`, if there is one.
fn last_of<'a>(body: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    body.pointer_mut(pointer)?.as_array_mut()?.last_mut()
}

/// Puts a cache breakpoint on `block`.
fn mark(block: Option<&mut Value>) {
    if let Some(Value::Object(block)) = block {
        block.insert("cache_control".to_owned(), json!({"type": "ephemeral"}));
    }
}

/// Messages stream state.
#[derive(Debug, Default)]
pub(super) struct Parser {
    calls: ToolCalls,
    /// Content-block index → tool-call index, for `tool_use` blocks.
    blocks: HashMap<u64, usize>,
    usage: Usage,
    stop_reason: Option<String>,
    started: bool,
}

impl StreamParser for Parser {
    fn frame(
        &mut self,
        frame: &SseFrame,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, ModelError> {
        let (data, kind) = typed(frame)?;
        match kind.as_str() {
            "message_start" => {
                self.started = true;
                if let Some(usage) = data.pointer("/message/usage") {
                    self.usage = Usage {
                        input_tokens: u64_field(usage, "input_tokens")
                            + u64_field(usage, "cache_creation_input_tokens")
                            + u64_field(usage, "cache_read_input_tokens"),
                        cached_input_tokens: u64_field(usage, "cache_read_input_tokens"),
                        cache_write_input_tokens: u64_field(usage, "cache_creation_input_tokens"),
                        output_tokens: u64_field(usage, "output_tokens"),
                    };
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let position = u64_field(&data, "index");
                match str_field(block, "type") {
                    Some("text") => {
                        if let Some(text) = str_field(block, "text").filter(|t| !t.is_empty()) {
                            out.push_back(StreamEvent::TextDelta(text.to_owned()));
                        }
                    }
                    Some("tool_use") => {
                        let id = str_field(block, "id").unwrap_or_default().to_owned();
                        let name = str_field(block, "name").unwrap_or_default().to_owned();
                        let index = self.calls.start(position.to_string(), id, name, out);
                        self.blocks.insert(position, index);
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match str_field(delta, "type") {
                    Some("text_delta") => {
                        if let Some(text) = str_field(delta, "text").filter(|t| !t.is_empty()) {
                            out.push_back(StreamEvent::TextDelta(text.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        let position = u64_field(&data, "index");
                        if let (Some(&index), Some(json)) =
                            (self.blocks.get(&position), str_field(delta, "partial_json"))
                        {
                            self.calls.delta(index, json, out);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(&index) = self.blocks.get(&u64_field(&data, "index")) {
                    self.calls.finish(index, out);
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = data.get("usage") {
                    // Cumulative counts: the latest wins.
                    if let Some(output) = usage.get("output_tokens").and_then(Value::as_u64) {
                        self.usage.output_tokens = output;
                    }
                }
            }
            "message_stop" => {
                self.calls.finish_all(out);
                let stop_reason = match self.stop_reason.as_deref() {
                    Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
                    None if !self.calls.any() => StopReason::EndTurn,
                    Some("tool_use") | None => StopReason::ToolUse,
                    Some("max_tokens") => StopReason::MaxTokens,
                    Some("refusal") => StopReason::ContentFilter,
                    Some(other) => StopReason::Other(other.to_owned()),
                };
                out.push_back(StreamEvent::Usage(self.usage));
                out.push_back(StreamEvent::Done { stop_reason });
                return Ok(true);
            }
            "error" => return Err(errors::from_stream_error(&data)),
            _ => {}
        }
        Ok(false)
    }

    fn end(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError> {
        Err(ended_early(if self.started {
            "message_stop arrived"
        } else {
            "message_start arrived"
        }))
    }
}
