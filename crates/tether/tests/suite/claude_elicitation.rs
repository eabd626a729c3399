//! The real Claude Code CLI (`TETHER_TEST_CLAUDE`) as the client of a standalone `tether mcp`:
//! it speaks protocol 2026-07-28 and declares elicitation, so `ask_human` returns the form as
//! `input_required`; Claude Code in print mode has nobody at its prompt and retries at once
//! with the form cancelled and the `requestState`, and the question is then answered on another
//! channel (`tether answer … 2`) — the agent gets the chosen option. Fake model server.

use std::fs;
use std::process::Command;

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};

use crate::common::agents::start;
use crate::common::{pending_question, run, text, wait_output};
use crate::suite::claude_cli::by_hand;

#[test]
fn claude_code_gets_the_form_as_input_required_and_an_answer_elsewhere_still_reaches_it() {
    let (_rt, server) = start(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool(
                "mcp__tether__ask_human",
                json!({"question": "Which database? I suggest Postgres.", "context": "a small app",
                    "confidence": 5, "options": ["Postgres", "SQLite"]}),
            ),
            Some((_, result)) => Turn::text(format!("Got it: {result}")),
        }
    }));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    // The server's stdin is kept, to see what Claude Code sent it.
    let wrap = ws.join("tether-mcp.sh");
    fs::write(
        &wrap,
        format!(
            "#!/bin/sh\ntee -a '{log}' | '{tether}' mcp -C '{ws}'\n",
            log = ws.join("client.jsonl").display(),
            tether = env!("CARGO_BIN_EXE_tether"),
            ws = ws.display()
        ),
    )
    .unwrap();
    assert!(
        Command::new("chmod")
            .arg("+x")
            .arg(&wrap)
            .status()
            .unwrap()
            .success()
    );
    // As the book tells a person wiring `tether mcp` into Claude Code: its tools always loaded.
    let config =
        json!({"mcpServers": {"tether": {"command": wrap, "args": [], "alwaysLoad": true}}});
    fs::write(ws.join("mcp.json"), config.to_string()).unwrap();
    let mut c = by_hand(
        ws,
        &server,
        "Ask which database to use.",
        "mcp__tether__ask_human",
    );
    let child = c.spawn().unwrap();

    let q = pending_question(ws);
    let qid = q["id"].as_str().unwrap();
    assert_eq!(q["options"], json!(["Postgres", "SQLite"]));
    let out = run(ws, &["answer", qid, "2", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = wait_output(child);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));

    let sent = fs::read_to_string(ws.join("client.jsonl")).unwrap();
    assert!(
        sent.contains("\"elicitation\":{") && sent.contains("2026-07-28"),
        "Claude Code declares elicitation on 2026-07-28: {sent}"
    );
    assert!(
        sent.contains(&format!("\"requestState\":\"{qid}\""))
            && sent.contains("\"inputResponses\":{\"answer\":{\"action\":\"cancel\"}}"),
        "Claude Code retried with the form's response: {sent}"
    );
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(
        last.contains("Human replied: SQLite") && last.contains("chose option 2 of 2"),
        "{last}"
    );
}
