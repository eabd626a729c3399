//! The MCP client's own prompt as a channel: a client declaring `elicitation` is sent an
//! `elicitation/create` form for each `ask_human`, racing the other channels. An accepted form
//! answers (a picked option is that choice); a declined or cancelled one leaves the question
//! pending on the others; when another channel answers first the form is withdrawn
//! (`notifications/cancelled`) and the client's late response is ignored; a client without the
//! capability, or the headless agent CLI of a run, is never sent one. On protocol 2026-07-28
//! (no server-to-client requests) the same form comes back as `input_required` and the client's
//! retry carries the response. Real `tether mcp` over stdio, a scripted client.

use serde_json::{Value, json};

use crate::common::mcp::{Server, assert_only_protocol, text};
use crate::common::{pending_question, run};

const ELICIT: &str = "elicitation/create";

fn choice_question() -> Value {
    json!({"question": "Which database? I suggest Postgres.", "context": "a small app",
        "confidence": 10, "options": ["Postgres", "SQLite"]})
}

/// The notification `method` the server sent, read already or next.
fn notification(server: &mut Server, method: &str) -> Value {
    if let Some(i) = server.seen.iter().position(|m| m["method"] == method) {
        return server.seen.remove(i);
    }
    loop {
        let message = server.next();
        if message["method"] == method {
            return message;
        }
        server.seen.push(message);
    }
}

/// A `tether mcp` whose client can show forms.
fn eliciting(dir: &std::path::Path) -> Server {
    let mut server = Server::start(dir, &[], |_| {});
    server.initialize_with(json!({"elicitation": {}}));
    server
}

#[test]
fn an_accepted_form_answers_and_a_picked_option_is_that_choice() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = eliciting(dir.path());
    let call = server.call_tool("ask_human", choice_question(), None);
    let form = server.server_request(ELICIT);
    let params = &form["params"];
    assert_eq!(
        params["message"],
        "Which database? I suggest Postgres.\n\nContext:\na small app"
    );
    assert_eq!(
        params["requestedSchema"]["properties"]["choice"]["enum"],
        json!(["Postgres", "SQLite"])
    );
    assert_eq!(
        params["requestedSchema"]["properties"]["other"]["type"],
        "string"
    );
    server.reply(
        &form,
        json!({"action": "accept", "content": {"choice": "SQLite"}}),
    );
    let response = server.response(call);
    let replied = text(&response["result"]);
    assert!(
        replied.starts_with("Human replied: SQLite\n(chose option 2 of 2)\n"),
        "{replied}"
    );
    assert!(
        replied.ends_with("responder: tester (via mcp)"),
        "{replied}"
    );
    let history = crate::common::text(&run(dir.path(), &["history"]).stdout);
    assert!(
        history.contains("→ SQLite (option 2) — tester via mcp"),
        "{history}"
    );
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
}

#[test]
fn own_words_in_an_open_form_answer_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = eliciting(dir.path());
    let call = server.call_tool(
        "ask_human",
        json!({"question": "Ship it?", "context": "", "confidence": 10}),
        None,
    );
    let form = server.server_request(ELICIT);
    assert_eq!(
        form["params"]["requestedSchema"]["required"],
        json!(["answer"])
    );
    server.reply(
        &form,
        json!({"action": "accept", "content": {"answer": "Yes, after lunch."}}),
    );
    let replied = text(&server.response(call)["result"]).to_owned();
    assert!(
        replied.starts_with("Human replied: Yes, after lunch.\n\n"),
        "{replied}"
    );
}

#[test]
fn a_declined_or_cancelled_form_leaves_the_question_pending_on_the_other_channels() {
    for action in ["decline", "cancel"] {
        let dir = tempfile::tempdir().unwrap();
        let mut server = eliciting(dir.path());
        let call = server.call_tool("ask_human", choice_question(), None);
        let form = server.server_request(ELICIT);
        server.reply(&form, json!({"action": action}));
        // Still waiting: the server goes on serving, and the question is pending.
        let tools = server.call("tools/list", json!({}));
        assert!(tools["tools"].is_array());
        let q = pending_question(dir.path());
        assert_eq!(q["status"], "pending", "{action}");
        let qid = q["id"].as_str().unwrap();
        let out = run(dir.path(), &["answer", qid, "1", "--as", "alice"]);
        assert_eq!(out.status.code(), Some(0), "{action}");
        let replied = text(&server.response(call)["result"]).to_owned();
        assert!(
            replied.starts_with("Human replied: Postgres\n(chose option 1 of 2)\n")
                && replied.ends_with("responder: alice (via cli)"),
            "{action}: {replied}"
        );
        let (code, lines) = server.close();
        assert_eq!(code, Some(0));
        assert_only_protocol(&lines);
    }
}

#[test]
fn when_another_channel_answers_first_the_form_is_withdrawn_and_a_late_reply_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = eliciting(dir.path());
    let call = server.call_tool("ask_human", choice_question(), None);
    let form = server.server_request(ELICIT);
    let qid = pending_question(dir.path())["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = run(dir.path(), &["answer", &qid, "Use SQLite", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    let replied = text(&server.response(call)["result"]).to_owned();
    assert!(
        replied.starts_with("Human replied: Use SQLite\n(answered in their own words"),
        "{replied}"
    );
    assert!(replied.ends_with("(via cli)"), "{replied}");
    let withdrawn = notification(&mut server, "notifications/cancelled");
    assert_eq!(withdrawn["params"]["requestId"], form["id"], "{withdrawn}");

    // The person answers the withdrawn form anyway: nothing changes, the server goes on.
    server.reply(
        &form,
        json!({"action": "accept", "content": {"choice": "Postgres"}}),
    );
    let tools = server.call("tools/list", json!({}));
    assert!(tools["tools"].is_array());
    let history = crate::common::text(&run(dir.path(), &["history"]).stdout);
    assert!(history.contains("alice via cli"), "{history}");
    assert!(!history.contains("via mcp"), "{history}");
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
}

#[test]
fn a_client_without_the_capability_is_never_sent_a_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[], |_| {});
    server.initialize();
    let call = server.call_tool("ask_human", choice_question(), None);
    let qid = pending_question(dir.path())["id"]
        .as_str()
        .unwrap()
        .to_owned();
    run(dir.path(), &["answer", &qid, "2"]);
    server.response(call);
    let (_, lines) = server.close();
    assert_only_protocol(&lines);
    assert!(
        !lines.iter().any(|l| l.contains(ELICIT)),
        "no elicitation: {lines:?}"
    );
}

#[test]
fn the_headless_client_of_a_run_is_never_sent_a_form() {
    let dir = tempfile::tempdir().unwrap();
    let store = tether_store::Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let run_id = store
        .create_run(tether_store::RunKind::Ralph, dir.path(), &json!({}))
        .unwrap();
    drop(store);
    let mut server = Server::start(dir.path(), &["--run", run_id.as_str()], |_| {});
    server.initialize_with(json!({"elicitation": {}}));
    let call = server.call_tool("ask_human", choice_question(), None);
    let q = pending_question(dir.path());
    assert_eq!(q["run_id"], run_id.as_str());
    run(dir.path(), &["answer", q["id"].as_str().unwrap(), "1"]);
    server.response(call);
    let (_, lines) = server.close();
    assert!(
        !lines.iter().any(|l| l.contains(ELICIT)),
        "no elicitation inside a run: {lines:?}"
    );
}

/// The `_meta` every request carries on protocol 2026-07-28 (no `initialize`): the version, the
/// client and its capabilities.
fn meta_2026(elicitation: bool) -> Value {
    let capabilities = if elicitation {
        json!({"elicitation": {"form": {}, "url": {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tether-tests", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// A `tether mcp` spoken to on protocol 2026-07-28 (it opens with `server/discover`).
fn stateless(dir: &std::path::Path) -> Server {
    let mut server = Server::start(dir, &[], |_| {});
    let found = server.call("server/discover", json!({"_meta": meta_2026(true)}));
    assert!(
        found["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{found}"
    );
    server
}

/// Calls `ask_human` on protocol 2026-07-28, with `extra` params (a retry's); returns the id.
fn call_2026(server: &mut Server, elicitation: bool, extra: Value) -> u64 {
    let mut params = json!({"name": "ask_human", "arguments": choice_question(),
        "_meta": meta_2026(elicitation)});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    server.request("tools/call", params)
}

/// The first round: the form comes back as `input_required`; returns the result.
fn first_round(server: &mut Server) -> Value {
    let call = call_2026(server, true, json!({}));
    let response = server.response(call);
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    let form = &result["inputRequests"]["answer"];
    assert_eq!(form["method"], ELICIT, "{response}");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["choice"]["enum"],
        json!(["Postgres", "SQLite"])
    );
    result.clone()
}

#[test]
fn on_2026_07_28_the_form_comes_back_as_input_required_and_the_retry_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = stateless(dir.path());
    let first = first_round(&mut server);
    let q = pending_question(dir.path());
    assert_eq!(
        first["requestState"], q["id"],
        "the state names the question"
    );
    let retry = call_2026(
        &mut server,
        true,
        json!({"requestState": first["requestState"],
            "inputResponses": {"answer": {"action": "accept", "content": {"choice": "SQLite"}}}}),
    );
    let response = server.response(retry);
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    let replied = text(&response["result"]);
    assert!(
        replied.starts_with("Human replied: SQLite\n(chose option 2 of 2)\n")
            && replied.ends_with("responder: tester (via mcp)"),
        "{replied}"
    );
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
}

#[test]
fn on_2026_07_28_a_declined_form_waits_for_the_other_channels() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = stateless(dir.path());
    let first = first_round(&mut server);
    let retry = call_2026(
        &mut server,
        true,
        json!({"requestState": first["requestState"],
            "inputResponses": {"answer": {"action": "decline"}}}),
    );
    let qid = pending_question(dir.path())["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = run(dir.path(), &["answer", &qid, "2", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    let replied = text(&server.response(retry)["result"]).to_owned();
    assert!(
        replied.starts_with("Human replied: SQLite\n(chose option 2 of 2)\n")
            && replied.ends_with("responder: alice (via cli)"),
        "{replied}"
    );
}

#[test]
fn on_2026_07_28_an_answer_given_elsewhere_while_the_form_is_open_stands() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = stateless(dir.path());
    let first = first_round(&mut server);
    let qid = first["requestState"].as_str().unwrap().to_owned();
    let out = run(dir.path(), &["answer", &qid, "Neither", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    let retry = call_2026(
        &mut server,
        true,
        json!({"requestState": qid,
            "inputResponses": {"answer": {"action": "accept", "content": {"choice": "Postgres"}}}}),
    );
    let replied = text(&server.response(retry)["result"]).to_owned();
    assert!(
        replied.starts_with("Human replied: Neither\n") && replied.ends_with("(via cli)"),
        "the first answer stands: {replied}"
    );
}

#[test]
fn on_2026_07_28_a_request_state_this_server_did_not_hand_out_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = stateless(dir.path());
    // A question asked elsewhere (say, by `tether ask`) is not this client's to answer.
    let mut other = crate::common::spawn(dir.path(), &["ask", "Someone else's?"]);
    let qid = pending_question(dir.path())["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let retry = call_2026(
        &mut server,
        true,
        json!({"requestState": qid,
            "inputResponses": {"answer": {"action": "accept", "content": {"other": "forged"}}}}),
    );
    let response = server.response(retry);
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(
        text(&response["result"]).contains("names no question this server is asking"),
        "{response}"
    );
    assert_eq!(pending_question(dir.path())["status"], "pending");
    other.kill().unwrap();
    other.wait().unwrap();
}

#[test]
fn on_2026_07_28_a_client_without_the_capability_just_waits() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = stateless(dir.path());
    let call = call_2026(&mut server, false, json!({}));
    let qid = pending_question(dir.path())["id"]
        .as_str()
        .unwrap()
        .to_owned();
    run(dir.path(), &["answer", &qid, "1"]);
    let response = server.response(call);
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    assert!(text(&response["result"]).starts_with("Human replied: Postgres\n"));
}
