//! `tether mcp` with the Zulip channel, against the fake Zulip server: a reply in the topic
//! answers the MCP call, and a cancelled call deregisters its event queue and leaves the
//! question pending.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tether_testkit::wait_until;
use tether_testkit::zulip_server::{Endpoint, FakeZulipServer};

use crate::common::mcp::{Server, assert_only_protocol, text};
use crate::common::{PATIENCE, pending_question, run, runtime};

/// A workspace whose questions go to the store and to `zulip`, and `tether mcp` serving it.
fn start(dir: &Path, zulip: &FakeZulipServer) -> Server {
    fs::write(
        dir.join("tether.toml"),
        "[human]\nchannels = [\"cli\", \"zulip\"]\n",
    )
    .unwrap();
    let (url, email, key, stream) = (
        zulip.server_url(),
        zulip.bot_email().to_owned(),
        zulip.api_key().to_owned(),
        zulip.stream().to_owned(),
    );
    let mut server = Server::start(dir, &[], |c| {
        c.env("ZULIP_SERVER_URL", url)
            .env("ZULIP_BOT_EMAIL", email)
            .env("ZULIP_BOT_API_KEY", key)
            .env("ZULIP_STREAM", stream);
    });
    server.initialize();
    server
}

fn ask(question: &str) -> Value {
    json!({"question": question, "context": "all tests pass", "confidence": 15})
}

#[test]
fn a_reply_in_the_topic_answers_the_call() {
    let rt = runtime();
    let zulip = rt
        .block_on(
            FakeZulipServer::builder()
                .longpoll_timeout(Duration::from_millis(300))
                .start(),
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path(), &zulip);
    let id = server.call_tool("ask_human", ask("Merge the migration now?"), Some("z"));
    rt.block_on(zulip.wait_for_messages(1, Duration::from_secs(20)))
        .unwrap();
    let posted = zulip.bot_messages();
    let topic = posted[0].topic.clone();
    assert!(
        topic.starts_with("Agent Q #1 — Merge the migration"),
        "{topic}"
    );
    assert!(posted[0].content.contains("all tests pass"));
    zulip.post_as_human(&topic, "Yes, merge it.");
    let response = server.response(id);
    let q = pending_or_answered(dir.path());
    let reply = text(&response["result"]);
    assert!(
        reply.starts_with("Human replied: Yes, merge it.\n\nthread_id: "),
        "{reply}"
    );
    assert!(reply.ends_with("(via zulip)"), "{reply}");
    assert_eq!(q["channel"], "zulip");
    no_live_queues(&zulip);
    let (_, lines) = server.close();
    assert_only_protocol(&lines);
}

#[test]
fn a_cancelled_call_deregisters_its_queue_and_leaves_the_question_pending() {
    let rt = runtime();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path(), &zulip);
    let id = server.call_tool("ask_human", ask("Drop the old table?"), None);
    rt.block_on(zulip.wait_for_count(Endpoint::GetEvents, 1, Duration::from_secs(20)))
        .unwrap();
    assert_eq!(zulip.live_queues().len(), 1);
    let q = pending_question(dir.path());
    server.notify("notifications/cancelled", json!({"requestId": id}));
    no_live_queues(&zulip);
    let again = pending_question(dir.path());
    assert_eq!(
        (&again["id"], &again["status"]),
        (&q["id"], &json!("pending"))
    );
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
    assert!(
        lines
            .iter()
            .all(|l| serde_json::from_str::<Value>(l).unwrap()["id"] != json!(id)),
        "no response to the cancelled call: {lines:?}"
    );
    assert_eq!(zulip.bot_messages().len(), 1, "posted once, nothing more");
}

#[test]
fn closing_stdin_cleans_up_at_once() {
    let rt = runtime();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path(), &zulip);
    server.call_tool("ask_human", ask("Still there?"), None);
    rt.block_on(zulip.wait_for_count(Endpoint::GetEvents, 1, Duration::from_secs(20)))
        .unwrap();
    let (code, _) = server.close();
    assert_eq!(code, Some(0));
    assert_eq!(
        zulip.count(Endpoint::DeleteQueue),
        1,
        "deregistered before exiting"
    );
    assert_eq!(pending_question(dir.path())["status"], "pending");
}

#[test]
fn sigterm_cleans_up_before_exiting() {
    let rt = runtime();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path(), &zulip);
    server.call_tool("ask_human", ask("Still there?"), None);
    rt.block_on(zulip.wait_for_count(Endpoint::GetEvents, 1, Duration::from_secs(20)))
        .unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(server.wait_exit(), Some(0));
    assert_eq!(
        zulip.count(Endpoint::DeleteQueue),
        1,
        "deregistered before exiting"
    );
    assert_eq!(pending_question(dir.path())["status"], "pending");
}

/// Waits (with a deadline) until the queue was deleted and none is left.
fn no_live_queues(zulip: &FakeZulipServer) {
    let done = || !zulip.deleted_queues().is_empty() && zulip.live_queues().is_empty();
    if let Err(e) = wait_until("the queue to be deleted", PATIENCE, || done().then_some(())) {
        panic!("{e}; queues still live: {:?}", zulip.live_queues());
    }
}

/// The workspace's only question, whatever its status.
fn pending_or_answered(dir: &Path) -> Value {
    let out = run(dir, &["history", "--json"]);
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    all[0].clone()
}
