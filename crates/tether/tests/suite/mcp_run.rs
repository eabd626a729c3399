//! `tether mcp` and the run its calls belong to: a malformed run id does not stop the server
//! (a client would silently have no tether tools), and a call the client gives up on leaves its
//! question pending with `tether questions` saying nobody waits, while a later answer is still
//! recorded for the run.

use serde_json::{Value, json};
use tether_store::{RunKind, RunStatus, Store};

use crate::common::mcp::{Server, assert_only_protocol, text};
use crate::common::{pending_question, run, tether};

fn ask(question: &str) -> Value {
    json!({"question": question, "context": "tests", "confidence": 10})
}

#[test]
fn a_malformed_run_id_starts_the_server_and_each_tool_that_needs_the_run_says_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.md"), "# Plan: p\n\n## Log\n").unwrap();
    for (args, env, named) in [
        (vec![], Some("not a run"), "TETHER_RUN_ID is `not a run`"),
        (vec!["--run", "r-?"], None, "--run is `r-?`"),
    ] {
        let mut server = Server::start(dir.path(), &args, |c| {
            if let Some(id) = env {
                c.env("TETHER_RUN_ID", id);
            }
        });
        server.initialize();
        let tools = server.call("tools/list", json!({}));
        assert_eq!(tools["tools"].as_array().unwrap().len(), 4);
        for (tool, arguments) in [
            ("ask_human", ask("Lost?")),
            (
                "complete_goal",
                json!({"id": "g", "evidence": "e", "paths": []}),
            ),
            ("cancel_goal", json!({"id": "g", "reason": "r"})),
        ] {
            let result = server.call("tools/call", json!({"name": tool, "arguments": arguments}));
            assert_eq!(result["isError"], true, "{tool}: {result}");
            assert!(
                text(&result).contains(&format!("{named}, which is not a run id (like r-ab12cd)")),
                "{tool}: {result}"
            );
        }
        let status = server.call(
            "tools/call",
            json!({"name": "plan_status", "arguments": {}}),
        );
        assert_eq!(status["isError"], false, "{status}");
        let (code, lines) = server.close();
        assert_eq!(code, Some(0));
        assert_only_protocol(&lines);
    }
    let history = run(dir.path(), &["history", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&history.stdout).unwrap(),
        json!([])
    );
}

#[test]
fn a_call_the_client_gives_up_on_leaves_a_question_nobody_waits_for_and_a_later_answer_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let run_id = store
        .create_run(RunKind::Goal, dir.path(), &json!({}))
        .unwrap();
    let mut server = Server::start(dir.path(), &[], |c| {
        c.env("TETHER_RUN_ID", run_id.as_str());
    });
    server.initialize();
    let id = server.call_tool("ask_human", ask("Which port?"), None);
    let q = pending_question(dir.path());
    let qid = q["id"].as_str().unwrap().to_owned();
    assert_eq!(q["abandoned"], Value::Null);
    assert_eq!(
        store.run(&run_id).unwrap().state.status,
        RunStatus::WaitingForInput
    );
    // The client's tool timeout passed: it cancels the call.
    server.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "Request timed out"}),
    );
    let listed = tether_testkit::wait_until(
        "the question to be marked abandoned",
        crate::common::PATIENCE,
        || {
            let out = run(dir.path(), &["questions", "--json"]);
            let list: Value = serde_json::from_slice(&out.stdout).ok()?;
            (!list[0]["abandoned"].is_null()).then_some(list)
        },
    )
    .unwrap();
    assert_eq!(listed[0]["status"], "pending");
    assert_eq!(
        listed[0]["abandoned"]["reason"],
        "the asking client gave up (it cancelled the call, e.g. on its tool timeout)"
    );
    let shown = tether(dir.path(), &["questions"])
        .redact(r"q-[0-9a-z]+", "q-ID")
        .redact(r"r-[0-9a-z]+", "r-ID")
        .redact(r"\d+ s ago", "[AGO]");
    insta::assert_snapshot!("questions_nobody_waiting", shown.stdout);
    // The run is no longer shown blocked on it.
    assert_eq!(store.run(&run_id).unwrap().state.status, RunStatus::Running);

    let answered = run(dir.path(), &["answer", &qid, "8080", "--as", "ana"]);
    assert_eq!(answered.status.code(), Some(0));
    let state = store.run(&run_id).unwrap().state;
    assert_eq!(
        state
            .late_answers
            .iter()
            .map(|q| q.as_str())
            .collect::<Vec<_>>(),
        [qid.as_str()]
    );
    let history = run(dir.path(), &["history", "--json"]);
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(
        (&history[0]["answer"], &history[0]["responder"]),
        (&json!("8080"), &json!("ana"))
    );
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
}
