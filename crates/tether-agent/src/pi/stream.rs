//! pi's `--mode json` output, read line by line while it runs (the raw stream is kept as the
//! transcript by [`LineSink`](crate::cli::lines::LineSink)).
//!
//! pi reports a failed turn in its stream, not in its exit status (it exits 0 after its own
//! retries give up), so the parser keeps the last assistant message: its text is the turn's
//! final message, and a `stopReason` of `error` or `aborted` with its `errorMessage` is the
//! failure. Every assistant message is a model call (its `usage` becomes a
//! [`AgentEvent::ModelCall`]); every `tool_execution_end` is a tool call, with the one-line
//! summary of the arguments its `tool_execution_start` carried.

use std::collections::HashMap;

use serde_json::Value;

use crate::cli::lines::LineParser;
use crate::cli::summary::{short_name, summary};
use crate::executor::{AgentEvent, TurnObserver};

/// The last assistant message of a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Last {
    /// Its text blocks, joined.
    pub(crate) text: String,
    /// `stopReason`: `stop`, `toolUse`, `length`, `error`, `aborted`.
    pub(crate) stop_reason: String,
    /// `errorMessage`, when the model call failed.
    pub(crate) error: Option<String>,
}

impl Last {
    /// Whether the turn failed: the model call errored or was aborted.
    pub(crate) fn failed(&self) -> bool {
        matches!(self.stop_reason.as_str(), "error" | "aborted")
    }
}

/// What the stream said, once it ended.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// The last assistant message.
    pub(crate) last: Option<Last>,
    /// Tool calls that finished.
    pub(crate) tool_calls: u32,
    /// Input tokens of every model call, cache reads and writes included.
    pub(crate) input_tokens: u64,
    /// Of those, the tokens read from the prompt cache.
    pub(crate) cached_input_tokens: u64,
    /// Of those, the tokens written to the prompt cache.
    pub(crate) cache_write_input_tokens: u64,
    /// What the calls cost, summed over those whose usage carries a cost above zero.
    pub(crate) cost_usd: Option<f64>,
    /// Output tokens of every model call.
    pub(crate) output_tokens: u64,
    /// `agent_settled` arrived: pi finished the prompt (`aborted` says whether it was stopped).
    pub(crate) settled: Option<bool>,
}

/// Reads `--mode json` lines into events as they complete.
pub(crate) struct StreamParser<'a> {
    observer: &'a dyn TurnObserver,
    /// Tool calls started and not finished: id → (name, summary).
    pending: HashMap<String, (String, String)>,
    pub(crate) seen: Seen,
}

impl<'a> StreamParser<'a> {
    pub(crate) fn new(observer: &'a dyn TurnObserver) -> Self {
        StreamParser {
            observer,
            pending: HashMap::new(),
            seen: Seen::default(),
        }
    }

    fn tool_start(&mut self, value: &Value) {
        let id = value["toolCallId"].as_str().unwrap_or_default().to_owned();
        let name = short_name(value["toolName"].as_str().unwrap_or("?"));
        let line = summary(&name, &value["args"]);
        self.pending.insert(id, (name, line));
    }

    fn tool_end(&mut self, value: &Value) {
        let id = value["toolCallId"].as_str().unwrap_or_default();
        let (tool, summary) = self.pending.remove(id).unwrap_or_else(|| {
            let name = short_name(value["toolName"].as_str().unwrap_or("?"));
            (name.clone(), name)
        });
        self.seen.tool_calls += 1;
        self.observer.event(AgentEvent::ToolCall {
            tool,
            summary,
            is_error: value["isError"].as_bool().unwrap_or(false),
        });
    }

    fn message_end(&mut self, message: &Value) {
        if message["role"] != "assistant" {
            return;
        }
        let usage = &message["usage"];
        let count = |key: &str| usage[key].as_u64().unwrap_or(0);
        let (cached, written) = (count("cacheRead"), count("cacheWrite"));
        let (input, output) = (count("input") + cached + written, count("output"));
        if let Some(cost) = usage.pointer("/cost/total").and_then(Value::as_f64)
            && cost > 0.0
        {
            self.seen.cost_usd = Some(self.seen.cost_usd.unwrap_or(0.0) + cost);
        }
        if input + output > 0 {
            self.seen.input_tokens += input;
            self.seen.cached_input_tokens += cached;
            self.seen.cache_write_input_tokens += written;
            self.seen.output_tokens += output;
            self.observer.event(AgentEvent::ModelCall {
                input_tokens: input,
                output_tokens: output,
            });
        }
        self.seen.last = Some(Last {
            text: text_of(message),
            stop_reason: message["stopReason"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            error: message["errorMessage"].as_str().map(str::to_owned),
        });
    }
}

impl LineParser for StreamParser<'_> {
    fn line(&mut self, value: &Value) {
        match value["type"].as_str() {
            Some("tool_execution_start") => self.tool_start(value),
            Some("tool_execution_end") => self.tool_end(value),
            Some("message_end") => self.message_end(&value["message"]),
            Some("agent_settled") => {
                self.seen.settled = Some(value["aborted"].as_bool().unwrap_or(false));
            }
            _ => {}
        }
    }
}

/// The text blocks of a message, joined by blank lines.
fn text_of(message: &Value) -> String {
    let texts: Vec<&str> = message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    texts.join("\n\n")
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
