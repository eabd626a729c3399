//! OpenAI Chat Completions (`POST {base}/chat/completions`), as OpenAI and the local servers
//! (llama.cpp, vLLM, ollama) speak it.
//!
//! Out: `messages` with `role: tool` results and `tool_calls` on assistant messages, tools as
//! `{"type":"function","function":{…}}`, `max_tokens` (understood by every compatible server),
//! `stream_options.include_usage` so the last chunk carries usage. In: `data:` chunks with
//! `choices[0].delta.content` and `delta.tool_calls[{index,id,function{name,arguments}}]`
//! fragments, a `finish_reason`, a usage chunk with `choices: []`, then `data: [DONE]`.

use std::collections::VecDeque;

use serde_json::{Value, json};

use super::tool_calls::ToolCalls;
use super::{StreamParser, ended_early, errors, history_arguments, json, str_field, u64_field};
use crate::sse::SseFrame;
use crate::{Message, ModelError, Request, StopReason, StreamEvent, Usage};

pub(super) fn body(model: &str, request: &Request) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(match message {
            Message::System { text } => json!({"role": "system", "content": text}),
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": history_arguments(call)},
                        })
                    })
                    .collect();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    Value::from(text.as_str())
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
        });
    }
    json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": request.max_tokens,
    })
}

/// Chat Completions stream state.
#[derive(Debug, Default)]
pub(super) struct Parser {
    calls: ToolCalls,
    finish_reason: Option<String>,
    usage: Usage,
}

impl Parser {
    fn complete(&mut self, out: &mut VecDeque<StreamEvent>) {
        self.calls.finish_all(out);
        // Some servers (ollama) say "stop" even when the turn ends in tool calls.
        let stop_reason = match self.finish_reason.as_deref() {
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::ContentFilter,
            Some("stop") | None if self.calls.any() => StopReason::ToolUse,
            Some("stop") | None => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push_back(StreamEvent::Usage(self.usage));
        out.push_back(StreamEvent::Done { stop_reason });
    }

    fn choice(&mut self, choice: &Value, out: &mut VecDeque<StreamEvent>) {
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = str_field(delta, "content")
            && !text.is_empty()
        {
            out.push_back(StreamEvent::TextDelta(text.to_owned()));
        }
        for fragment in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.tool_call_fragment(fragment, out);
        }
        if let Some(reason) = str_field(choice, "finish_reason") {
            self.finish_reason = Some(reason.to_owned());
            self.calls.finish_all(out);
        }
    }

    fn tool_call_fragment(&mut self, fragment: &Value, out: &mut VecDeque<StreamEvent>) {
        let position = fragment.get("index").and_then(Value::as_u64).unwrap_or(0);
        let key = position.to_string();
        let function = fragment.get("function").unwrap_or(&Value::Null);
        let name = str_field(function, "name").unwrap_or_default();
        let index = match self.calls.index_of(&key) {
            Some(index) => {
                self.calls.set_name_if_empty(index, name);
                index
            }
            None => {
                let id = str_field(fragment, "id")
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("call_{position}"), str::to_owned);
                self.calls.start(key, id, name.to_owned(), out)
            }
        };
        if let Some(arguments) = str_field(function, "arguments") {
            self.calls.delta(index, arguments, out);
        }
    }
}

impl StreamParser for Parser {
    fn frame(
        &mut self,
        frame: &SseFrame,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<bool, ModelError> {
        if frame.data.trim() == "[DONE]" {
            self.complete(out);
            return Ok(true);
        }
        let chunk = json(frame)?;
        if chunk.get("error").is_some_and(|error| !error.is_null()) {
            return Err(errors::from_stream_error(&chunk));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage = Usage {
                input_tokens: u64_field(usage, "prompt_tokens"),
                cached_input_tokens: usage
                    .pointer("/prompt_tokens_details/cached_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                // Automatic caching: the OpenAI formats report no writes.
                cache_write_input_tokens: 0,
                output_tokens: u64_field(usage, "completion_tokens"),
            };
        }
        if let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
        {
            self.choice(choice, out);
        }
        Ok(false)
    }

    fn end(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<(), ModelError> {
        // Some servers close without `[DONE]`; a finish reason means the answer is whole.
        if self.finish_reason.is_some() {
            self.complete(out);
            Ok(())
        } else {
            Err(ended_early("a finish_reason or [DONE] arrived"))
        }
    }
}
