//! Codex's `exec --json` output, read line by line while it runs (the raw stream is kept as the
//! transcript by [`LineSink`](crate::cli::lines::LineSink)), and its stderr, watched for the one
//! failure Codex reports only there.
//!
//! Every finished item becomes tether's own event: an MCP tool call, a shell command or a file
//! change is a tool call (name, one-line summary, whether it failed); the last agent message is
//! the turn's final message; `turn.completed` carries the token usage, `turn.failed` and `error`
//! say why a turn failed.

use std::io::{self, Write};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::cli::SERVER;
use crate::cli::lines::LineParser;
use crate::cli::summary::{summary, with_tool};
use crate::executor::{AgentEvent, TurnObserver};

/// What the stream said, once it ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The last `agent_message` of the turn.
    pub(crate) final_message: String,
    /// Whether `turn.completed` arrived.
    pub(crate) completed: bool,
    /// Why the turn failed (`turn.failed`, or the last top-level `error`).
    pub(crate) failure: Option<String>,
    /// Tool calls that finished.
    pub(crate) tool_calls: u32,
    /// Input tokens of the turn.
    pub(crate) input_tokens: u64,
    /// Of those, the tokens read from the prompt cache.
    pub(crate) cached_input_tokens: u64,
    /// Output tokens of the turn.
    pub(crate) output_tokens: u64,
}

/// Reads `exec --json` lines into events as they complete.
pub(crate) struct StreamParser<'a> {
    observer: &'a dyn TurnObserver,
    pub(crate) seen: Seen,
}

impl<'a> StreamParser<'a> {
    pub(crate) fn new(observer: &'a dyn TurnObserver) -> Self {
        StreamParser {
            observer,
            seen: Seen::default(),
        }
    }

    fn item(&mut self, item: &Value) {
        let call = match item["type"].as_str() {
            Some("agent_message") => {
                self.seen.final_message = item["text"].as_str().unwrap_or_default().to_owned();
                return;
            }
            Some("mcp_tool_call") => mcp_call(item),
            Some("command_execution") => {
                let failed = item["exit_code"].as_i64().is_some_and(|c| c != 0);
                let text = unwrap_shell(item["command"].as_str().unwrap_or_default());
                ("shell".to_owned(), with_tool("shell", text), failed)
            }
            Some("file_change") => file_change(item),
            Some("web_search") => {
                let text = item["query"].as_str().unwrap_or_default();
                (
                    "web_search".to_owned(),
                    with_tool("web_search", text),
                    false,
                )
            }
            _ => return,
        };
        let (tool, summary, failed) = call;
        let status_failed = matches!(item["status"].as_str(), Some("failed" | "declined"));
        self.seen.tool_calls += 1;
        self.observer.event(AgentEvent::ToolCall {
            tool,
            summary,
            is_error: failed || status_failed,
        });
    }

    fn turn_completed(&mut self, value: &Value) {
        let usage = &value["usage"];
        let input_tokens = usage["input_tokens"].as_u64().unwrap_or(0);
        let output_tokens = usage["output_tokens"].as_u64().unwrap_or(0);
        self.seen.completed = true;
        self.seen.input_tokens += input_tokens;
        self.seen.cached_input_tokens += usage["cached_input_tokens"].as_u64().unwrap_or(0);
        self.seen.output_tokens += output_tokens;
        self.observer.event(AgentEvent::ModelCall {
            input_tokens,
            output_tokens,
        });
    }
}

impl LineParser for StreamParser<'_> {
    fn line(&mut self, value: &Value) {
        match value["type"].as_str() {
            Some("item.completed") => self.item(&value["item"]),
            Some("turn.completed") => self.turn_completed(value),
            Some("turn.failed") => {
                self.seen.failure = Some(message(&value["error"]));
            }
            Some("error") => self.seen.failure = Some(message(value)),
            _ => {}
        }
    }
}

/// tether's own tools keep their names (`ask_human`); another server's are `server.tool`.
fn mcp_call(item: &Value) -> (String, String, bool) {
    let server = item["server"].as_str().unwrap_or("?");
    let tool = item["tool"].as_str().unwrap_or("?");
    let name = if server == SERVER {
        tool.to_owned()
    } else {
        format!("{server}.{tool}")
    };
    let failed = !item["error"].is_null() || item["result"]["is_error"] == true;
    (name.clone(), summary(&name, &item["arguments"]), failed)
}

/// The command inside Codex's shell wrapper: `/bin/bash -lc 'cargo test'` → `cargo test`.
fn unwrap_shell(command: &str) -> &str {
    let inner = [
        "bash -lc ",
        "bash -c ",
        "sh -lc ",
        "sh -c ",
        "zsh -lc ",
        "zsh -c ",
    ]
    .iter()
    .find_map(|wrapper| {
        let at = command.find(wrapper)?;
        let program = &command[..at];
        (program.is_empty() || program.ends_with('/')).then(|| &command[at + wrapper.len()..])
    });
    let Some(inner) = inner else {
        return command;
    };
    for quote in ['\'', '"'] {
        if let Some(unquoted) = inner
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return unquoted;
        }
    }
    inner
}

/// `apply_patch src/a.rs, src/b.rs`.
fn file_change(item: &Value) -> (String, String, bool) {
    let paths: Vec<&str> = item["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|change| change["path"].as_str())
        .collect();
    let tool = "apply_patch";
    (tool.to_owned(), with_tool(tool, &paths.join(", ")), false)
}

/// An error's `message`, else the whole value as text.
fn message(error: &Value) -> String {
    error["message"]
        .as_str()
        .map_or_else(|| error.to_string(), str::to_owned)
}

/// What Codex prints on stderr when an MCP server did not start; it carries on without it.
const MCP_STARTUP_FAILED: &str = "MCP server startup failed";

/// Watches Codex's stderr while it runs, copying it to `log`: when tether's MCP server did not
/// start, the line is kept and the turn stopped, since running without tether's tools is
/// pointless.
pub(crate) struct StderrWatch<'a> {
    log: Box<dyn Write + Send + 'a>,
    stop: CancellationToken,
    partial: Vec<u8>,
    /// The line saying tether's MCP server did not start, if one came.
    pub(crate) mcp_failed: Option<String>,
}

impl<'a> StderrWatch<'a> {
    pub(crate) fn new(log: Box<dyn Write + Send + 'a>, stop: CancellationToken) -> Self {
        StderrWatch {
            log,
            stop,
            partial: Vec::new(),
            mcp_failed: None,
        }
    }

    fn line(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let ours = format!("server_name=\"{SERVER}\"");
        let ours_bare = format!("server_name={SERVER}");
        if self.mcp_failed.is_none()
            && line.contains(MCP_STARTUP_FAILED)
            && (line.contains(&ours) || line.contains(&ours_bare))
        {
            let line = strip_ansi(line.trim());
            let from = line.find(MCP_STARTUP_FAILED).unwrap_or(0);
            self.mcp_failed = Some(line[from..].to_owned());
            self.stop.cancel();
        }
    }
}

impl Write for StderrWatch<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.log.write_all(buf)?;
        self.partial.extend_from_slice(buf);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.line(&line);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.partial);
        self.line(&rest);
        self.log.flush()
    }
}

/// `text` without terminal colour sequences (`ESC [ … m`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
