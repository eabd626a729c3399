//! The MCP client's own prompt as a channel: a client declaring `elicitation` is sent an
//! `elicitation/create` form for each `ask_human`, racing the other channels. An accepted form
//! answers (a picked option is that choice); a declined or cancelled one leaves the question
//! pending on the others; when another channel answers first the form is withdrawn
//! (`notifications/cancelled`) and the client's late response is ignored; a client without the
//! capability is never sent one. Real `tether mcp` over stdio, a scripted client.

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
