//! Claude Code's `stream-json` output, read line by line while it runs (the raw stream is kept
//! as the transcript by [`LineSink`](crate::cli::lines::LineSink)).
//!
//! Every line is turned into tether's own
//! events: a tool call is reported when its result comes back (name, one-line summary, whether
//! it failed), the `system`/`init` line says whether tether's MCP server connected, and the final
//! `result` line carries the agent's last message and the turn's token usage.

use std::collections::HashMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::cli::SERVER;
use crate::cli::lines::LineParser;
use crate::cli::summary::{short_name, summary};
use crate::executor::{AgentEvent, TurnObserver};

/// The `result` line of a turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Finish {
    /// The agent's final message (or the error text when `is_error`).
    pub(crate) message: String,
    /// Whether Claude Code reports the turn as failed.
    pub(crate) is_error: bool,
    /// `subtype` (`success`, `error_max_turns`, …).
    pub(crate) subtype: String,
    /// Input tokens of the turn, cache reads and writes included.
    pub(crate) input_tokens: u64,
    /// Of those, the tokens read from the prompt cache.
    pub(crate) cached_input_tokens: u64,
    /// Of those, the tokens written to the prompt cache.
    pub(crate) cache_write_input_tokens: u64,
    /// Output tokens of the turn.
    pub(crate) output_tokens: u64,
    /// `total_cost_usd`, when the line carries it.
    pub(crate) cost_usd: Option<f64>,
}

/// What the stream said, once it ended.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// The status of tether's MCP server in `system`/`init` (`connected`, `failed`, …), or
    /// `Some("missing")` when init did not list it; `None` before init.
    pub(crate) mcp_status: Option<String>,
    /// The final `result` line.
    pub(crate) finish: Option<Finish>,
    /// Tool calls whose results came back.
    pub(crate) tool_calls: u32,
}

/// Reads stream-json lines into events as they complete.
pub(crate) struct StreamParser<'a> {
    observer: &'a dyn TurnObserver,
    /// Fired when the MCP server did not connect: the turn is stopped, there is no point in
    /// running it without tether's tools.
    stop: CancellationToken,
    pending: HashMap<String, (String, String)>,
    pub(crate) seen: Seen,
}

impl<'a> StreamParser<'a> {
    pub(crate) fn new(observer: &'a dyn TurnObserver, stop: CancellationToken) -> Self {
        StreamParser {
            observer,
            stop,
            pending: HashMap::new(),
            seen: Seen::default(),
        }
    }

    fn init(&mut self, value: &Value) {
        let status = value["mcp_servers"]
            .as_array()
            .and_then(|servers| servers.iter().find(|s| s["name"] == SERVER))
            .and_then(|s| s["status"].as_str())
            .unwrap_or("missing")
            .to_owned();
        if status != "connected" {
            self.stop.cancel();
        }
        self.seen.mcp_status = Some(status);
    }

    fn assistant(&mut self, value: &Value) {
        for block in blocks(value) {
            if block["type"] == "tool_use" {
                let id = block["id"].as_str().unwrap_or_default().to_owned();
                let name = short_name(block["name"].as_str().unwrap_or("?"));
                self.pending
                    .insert(id, (name.clone(), summary(&name, &block["input"])));
            }
        }
    }

    fn user(&mut self, value: &Value) {
        for block in blocks(value) {
            if block["type"] != "tool_result" {
                continue;
            }
            let id = block["tool_use_id"].as_str().unwrap_or_default();
            let (tool, summary) = self
                .pending
                .remove(id)
                .unwrap_or_else(|| ("?".to_owned(), String::new()));
            self.seen.tool_calls += 1;
            self.observer.event(AgentEvent::ToolCall {
                tool,
                summary,
                is_error: block["is_error"].as_bool().unwrap_or(false),
            });
        }
    }
}

impl LineParser for StreamParser<'_> {
    fn line(&mut self, value: &Value) {
        match value["type"].as_str() {
            Some("system") if value["subtype"] == "init" => self.init(value),
            Some("assistant") => self.assistant(value),
            Some("user") => self.user(value),
            Some("result") => self.seen.finish = Some(finish(value)),
            _ => {}
        }
    }
}

fn blocks(value: &Value) -> impl Iterator<Item = &Value> {
    value["message"]["content"].as_array().into_iter().flatten()
}

fn finish(value: &Value) -> Finish {
    let usage = &value["usage"];
    let message = value["result"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| value["errors"].as_array().map(|e| join_strings(e)))
        .unwrap_or_default();
    Finish {
        message,
        is_error: value["is_error"].as_bool().unwrap_or(false),
        subtype: value["subtype"].as_str().unwrap_or_default().to_owned(),
        input_tokens: [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .map(|k| usage[*k].as_u64().unwrap_or(0))
        .sum(),
        cached_input_tokens: usage["cache_read_input_tokens"].as_u64().unwrap_or(0),
        cache_write_input_tokens: usage["cache_creation_input_tokens"].as_u64().unwrap_or(0),
        output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
        cost_usd: value["total_cost_usd"].as_f64(),
    }
}

fn join_strings(items: &[Value]) -> String {
    let texts: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
    texts.join("; ")
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
