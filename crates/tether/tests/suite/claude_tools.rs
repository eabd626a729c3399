//! Which tools the real Claude Code CLI (`TETHER_TEST_CLAUDE`) declares to the model with
//! tether's MCP server, against the fake model server: its tool search stays on — the tools an
//! agent rarely needs are announced by name only, and the ones of a person's prompt or a host
//! never — while tether's tools are declared in full from the first request, so the agent calls
//! `ask_human` in its first turn. Through tether's executor (its MCP configuration marks the
//! server `alwaysLoad`), and through a person's own configuration naming `tether mcp` without
//! that mark (the server's tool list marks each tool).

use std::fs;

use serde_json::{Value, json};
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use super::claude_cli::{by_hand, workspace};
use crate::common::agents::{diagnose, ralph, start};
use crate::common::{pending_question, run, text, wait_output};

/// Claude Code's tools that tool search defers (announced by name, loaded on demand).
const DEFERRED: [&str; 4] = ["WebFetch", "WebSearch", "CronCreate", "NotebookEdit"];

/// The tools of the first model request: each one's name, and whether it is declared (not
/// deferred).
fn first_tools(server: &FakeModelServer) -> Vec<(String, bool)> {
    let first = &server.requests()[0];
    assert_eq!(first.path, "/v1/messages");
    first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_owned();
            (name, t["defer_loading"].as_bool() != Some(true))
        })
        .collect()
}

/// tether's tools are declared in full; tool search is on and Claude Code's rarer tools are not
/// declared.
fn assert_tethers_tools_declared_and_the_rest_deferred(tools: &[(String, bool)]) {
    let declared: Vec<&str> = tools
        .iter()
        .filter(|(_, declared)| *declared)
        .map(|(name, _)| name.as_str())
        .collect();
    for tool in tether_agent::CLAUDE_TOOLS {
        assert!(declared.contains(&tool), "{tool} not declared: {tools:?}");
    }
    assert!(
        declared.contains(&"ToolSearch"),
        "tool search is off: {tools:?}"
    );
    for tool in DEFERRED {
        assert!(
            !declared.contains(&tool),
            "{tool} is declared: every tool is declared up front again: {tools:?}"
        );
    }
}

/// The agent's first turn calls `ask_human`; its second says what the person replied.
fn asking() -> Script {
    Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "mcp__tether__ask_human",
            json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
        ),
        Some((_, result)) => Turn::text(format!("Noted ({result}). <promise>DONE</promise>")),
    })
}

/// The tool result the agent's second request carried.
fn tool_result(server: &FakeModelServer) -> String {
    let second = &server.requests()[1];
    let messages = second.body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    let result = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "tool_result")
        .unwrap();
    match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

#[test]
fn tethers_executor_declares_tethers_tools_with_tool_search_on_and_the_agent_asks_at_once() {
    let (_rt, server) = start(asking());
    let dir = workspace(&server, "");
    let child = ralph(dir.path(), "Pick the logo colour.");
    let q = pending_question(dir.path());
    let id = q["id"].as_str().unwrap();
    let out = run(dir.path(), &["answer", id, "Blue.", "--as", "carol"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        diagnose(dir.path(), &done)
    );

    let tools = first_tools(&server);
    assert_tethers_tools_declared_and_the_rest_deferred(&tools);
    for tool in tether_agent::CLAUDE_UNATTENDED {
        assert!(
            tools.iter().all(|(name, _)| name != tool),
            "{tool} offered: {tools:?}"
        );
    }
    let result = tool_result(&server);
    assert!(result.starts_with("Human replied: Blue."), "{result}");
    assert!(
        !result.contains("input schema was not in your prompt"),
        "the agent called a tool it had not been given: {result}"
    );
}

#[test]
fn a_persons_own_configuration_of_tether_mcp_gets_its_tools_declared_too() {
    let (_rt, server) = start(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("mcp__tether__plan_status", json!({})),
            Some(_) => Turn::text("Read it."),
        }
    }));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    // No `alwaysLoad` here: the tool list's own `_meta` keeps the tools loaded.
    let config = json!({"mcpServers": {"tether": {
        "command": env!("CARGO_BIN_EXE_tether"),
        "args": ["mcp", "-C", ws.display().to_string()],
    }}});
    fs::write(ws.join("mcp.json"), config.to_string()).unwrap();
    let mut c = by_hand(ws, &server, "Read the plan.", "mcp__tether__plan_status");
    let done = wait_output(c.spawn().unwrap());
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert_tethers_tools_declared_and_the_rest_deferred(&first_tools(&server));
    let result = tool_result(&server);
    assert!(
        !result.contains("input schema was not in your prompt"),
        "the agent called a tool it had not been given: {result}"
    );
}
