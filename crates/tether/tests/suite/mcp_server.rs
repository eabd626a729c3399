//! `tether mcp` spoken to over its stdio, as an MCP client would: the handshake and tool list,
//! ask_human answered from another shell, cancellation, progress, misconfiguration, the run a
//! question is filed under, and nothing but protocol on stdout.

use std::fs;

use serde_json::{Value, json};

use crate::common::mcp::{Server, assert_only_protocol, text};
use crate::common::{pending_question, run};

fn ask(question: &str) -> Value {
    json!({"question": question, "context": "tests", "confidence": 10})
}

#[test]
fn initialize_then_the_tool_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    let init = server.initialize();
    assert_eq!(init["serverInfo"]["name"], "tether");
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let tools = server.call("tools/list", json!({}));
    insta::assert_json_snapshot!(tools);
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
}

/// Every schema `tools/list` carries is a valid JSON Schema (2020-12, checked by Python's
/// `jsonschema`) using only the formats the specification defines: strict validators (Ajv,
/// Zod's converters) refuse or complain of any other.
#[test]
fn every_tool_schema_is_standard_json_schema() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let tools = server.call("tools/list", json!({}));
    let mut schemas = Vec::new();
    for tool in tools["tools"].as_array().unwrap() {
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = tool.get(key) {
                let unknown = tether_mcp::unknown_formats(schema);
                assert!(unknown.is_empty(), "{} {key}: {unknown:?}", tool["name"]);
                schemas.push(schema.clone());
            }
        }
    }
    assert!(schemas.len() > 4, "{tools}");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut check = std::process::Command::new(python)
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             for s in json.load(sys.stdin): jsonschema.Draft202012Validator.check_schema(s)",
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(check.stdin.take().unwrap(), &schemas).unwrap();
    let out = check.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.close();
}

#[test]
fn a_question_is_answered_from_another_shell() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let id = server.call_tool("ask_human", ask("Postgres or SQLite?"), Some("p1"));
    let q = pending_question(dir.path());
    assert_eq!(
        (q["question"].as_str(), q["run_id"].as_str()),
        (Some("Postgres or SQLite?"), None)
    );
    let qid = q["id"].as_str().unwrap();
    let out = run(dir.path(), &["answer", qid, "SQLite", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    let response = server.response(id);
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert_eq!(
        text(&response["result"]),
        format!("Human replied: SQLite\n\nthread_id: {qid}\nresponder: alice (via cli)")
    );
    let (_, lines) = server.close();
    assert_only_protocol(&lines);
}

#[test]
fn cancelling_stops_the_wait_leaves_the_question_pending_and_sends_no_response() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let id = server.call_tool("ask_human", ask("Ship on Friday?"), None);
    let q = pending_question(dir.path());
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the user stopped the agent"}),
    );
    // The server goes on serving; the cancelled call gets nothing.
    let tools = server.call("tools/list", json!({}));
    assert_eq!(tools["tools"].as_array().unwrap().len(), 4);
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
    let responses: Vec<&String> = lines
        .iter()
        .filter(|l| serde_json::from_str::<Value>(l).unwrap()["id"] == json!(id))
        .collect();
    assert!(responses.is_empty(), "{responses:?}");
    let again = pending_question(dir.path());
    assert_eq!(
        (&again["id"], &again["status"]),
        (&q["id"], &json!("pending"))
    );
}

#[test]
fn progress_is_notified_while_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &["--progress-ms", "50"], |_| {});
    server.initialize();
    let id = server.call_tool("ask_human", ask("Which port?"), Some("tok-7"));
    let q = pending_question(dir.path());
    let qid = q["id"].as_str().unwrap().to_owned();
    let mut progress = Vec::new();
    while progress.len() < 3 {
        let message = server.next();
        assert_eq!(message["method"], "notifications/progress", "{message}");
        assert_eq!(message["params"]["progressToken"], "tok-7");
        progress.push(message["params"].clone());
    }
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert!(
        progress[2]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("tether answer {qid}")),
        "{}",
        progress[2]
    );
    run(dir.path(), &["answer", &qid, "8080"]);
    let response = server.response(id);
    assert!(text(&response["result"]).starts_with("Human replied: 8080"));
}

/// A second question, asked with a token while the first waits without one, is the clock: once
/// it has had three progress notifications, the first has waited through as many intervals.
#[test]
fn no_progress_without_a_progress_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &["--progress-ms", "20"], |_| {});
    server.initialize();
    let id = server.call_tool("ask_human", ask("Which port?"), None);
    let q = pending_question(dir.path());
    let clock = server.call_tool("ask_human", ask("Which host?"), Some("clock"));
    for _ in 0..3 {
        let message = server.next();
        assert_eq!(message["method"], "notifications/progress", "{message}");
        assert_eq!(message["params"]["progressToken"], "clock", "{message}");
    }
    run(dir.path(), &["answer", q["id"].as_str().unwrap(), "8080"]);
    let response = server.response(id);
    assert!(text(&response["result"]).starts_with("Human replied: 8080"));
    let untokened: Vec<&Value> = server
        .seen
        .iter()
        .filter(|m| m["params"]["progressToken"] != "clock")
        .collect();
    assert!(untokened.is_empty(), "{untokened:?}");
    let second = pending_question(dir.path());
    assert_eq!(second["question"], "Which host?");
    run(
        dir.path(),
        &["answer", second["id"].as_str().unwrap(), "localhost"],
    );
    server.response(clock);
}

#[test]
fn logs_go_to_stderr_and_stdout_carries_only_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &["-vv", "--progress-ms", "30"], |c| {
        c.env("TETHER_LOG", "debug");
    });
    server.initialize();
    server.call("tools/list", json!({}));
    server.call(
        "tools/call",
        json!({"name": "plan_status", "arguments": {}}),
    );
    let id = server.call_tool("ask_human", ask("Logs?"), Some(&"t".repeat(3)));
    let q = pending_question(dir.path());
    run(dir.path(), &["answer", q["id"].as_str().unwrap(), "stderr"]);
    server.response(id);
    let stderr = server.stderr();
    let (_, lines) = server.close();
    assert_only_protocol(&lines);
    assert!(
        stderr.contains("DEBUG"),
        "debug logs were asked for: {stderr}"
    );
}

#[test]
fn threshold_zero_still_lists_ask_human_and_answers_that_asking_is_disabled() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tether.toml"), "[human]\nthreshold = 0\n").unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let tools = server.call("tools/list", json!({}));
    assert!(
        tools["tools"][0]["description"]
            .as_str()
            .unwrap()
            .contains("level 0 of 5")
    );
    let result = server.call(
        "tools/call",
        json!({"name": "ask_human", "arguments": ask("May I?")}),
    );
    assert_eq!(result["isError"], false);
    assert!(
        text(&result).starts_with("Asking a human is disabled here"),
        "{result}"
    );
    let history = run(dir.path(), &["history", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&history.stdout).unwrap(),
        json!([])
    );
}

#[test]
fn a_misconfigured_zulip_is_a_tool_error_naming_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[human]\nchannels = [\"cli\", \"zulip\"]\n[zulip]\nserver_url = \"https://chat.example.com\"\n\
         bot_email = \"bot@example.com\"\nstream = \"repo\"\n",
    )
    .unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let result = server.call(
        "tools/call",
        json!({"name": "ask_human", "arguments": ask("Anyone?")}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).contains("missing the bot API key (set ZULIP_BOT_API_KEY)"),
        "{result}"
    );
    assert!(
        server.stderr().contains("ZULIP_BOT_API_KEY"),
        "logged at start"
    );
    let history = run(dir.path(), &["history", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&history.stdout).unwrap(),
        json!([])
    );
}

#[test]
fn questions_are_filed_under_the_run_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let store = tether_store::Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let run_id = store
        .create_run(tether_store::RunKind::Ralph, dir.path(), &json!({}))
        .unwrap();
    drop(store);
    let mut server = Server::start(dir.path(), &[], |c| {
        c.env("TETHER_RUN_ID", run_id.as_str());
    });
    server.initialize();
    let id = server.call_tool("ask_human", ask("Under which run?"), None);
    let q = pending_question(dir.path());
    assert_eq!(q["run_id"], run_id.as_str());
    run(
        dir.path(),
        &["answer", q["id"].as_str().unwrap(), "This one."],
    );
    server.response(id);

    let mut stray = Server::start(dir.path(), &["--run", "r-zzzzzz"], |_| {});
    stray.initialize();
    let result = stray.call(
        "tools/call",
        json!({"name": "ask_human", "arguments": ask("Lost?")}),
    );
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("r-zzzzzz"), "{result}");
    // A malformed id: see mcp_run.rs (the server starts; each tool that needs the run says why).
}

#[test]
fn plan_status_reads_the_plan_and_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("plan.md"),
        "# Plan: demo\n\n## Goal: Ship it\n<!-- id: ship -->\nstatus: active\n\
         done_when: it ships\n\n- [x] build\n- [ ] release\n\n## Goal: Docs\nstatus: later\n",
    )
    .unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let result = server.call(
        "tools/call",
        json!({"name": "plan_status", "arguments": {}}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let s = &result["structuredContent"];
    assert_eq!(s["goals"][0]["subtasks_done"], 1);
    assert_eq!(s["goals"][0]["subtasks_total"], 2);
    let errors: Vec<&Value> = s["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{s}");
    assert_eq!(errors[0]["at"], "plan.md:12");
    assert!(text(&result).contains("plan.md:12: error:"), "{result}");

    fs::remove_file(dir.path().join("plan.md")).unwrap();
    let missing = server.call(
        "tools/call",
        json!({"name": "plan_status", "arguments": {}}),
    );
    assert_eq!(missing["isError"], true);
    assert!(
        text(&missing).contains("plan.md does not exist"),
        "{missing}"
    );
}

#[test]
fn an_invalid_config_does_not_stop_the_server() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tether.toml"), "[loop]\nspin_guard = 0\n").unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let result = server.call(
        "tools/call",
        json!({"name": "plan_status", "arguments": {}}),
    );
    assert_eq!(result["isError"], true);
    assert!(
        text(&result).contains("tether.toml:2: loop.spin_guard"),
        "{result}"
    );
}
