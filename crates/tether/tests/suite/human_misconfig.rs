//! Zulip listed in `human.channels` but not configured: `tether ralph` still runs and the
//! agent's `ask_human` gets a tool error naming what is missing; `tether ask` exits 2 with it.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{cmd, model_table, runtime, text};

/// `tether <args>` with Zulip configured but for its bot API key.
fn run(dir: &Path, args: &[&str]) -> Output {
    cmd(dir, args)
        .env("ZULIP_SERVER_URL", "https://chat.example.com")
        .env("ZULIP_BOT_EMAIL", "bot@example.com")
        .env("ZULIP_STREAM", "repo")
        .output()
        .unwrap()
}

const HUMAN: &str = "[human]\nchannels = [\"cli\", \"zulip\"]\n";

#[test]
fn the_agent_is_told_what_is_missing_and_the_run_goes_on() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "ask_human",
            json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
        ),
        Some(_) => Turn::text("Blue it is. <promise>DONE</promise>"),
    });
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n{HUMAN}",
            model_table("model", Api::OpenAiChat, &server, "fake")
        ),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "ralph",
            "Pick the logo colour.",
            "--completion-promise",
            "DONE",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let last = server.requests().last().unwrap().raw_body.clone();
    assert!(
        last.contains("ask_human cannot reach a human: Zulip is not configured: missing the bot API key (set ZULIP_BOT_API_KEY)"),
        "{last}"
    );
    let history: Value =
        serde_json::from_slice(&run(dir.path(), &["history", "--json"]).stdout).unwrap();
    assert_eq!(history, json!([]), "nothing was asked");
}

#[test]
fn tether_ask_exits_2_naming_the_missing_variable() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tether.toml"), HUMAN).unwrap();
    let out = run(dir.path(), &["ask", "Which colour?"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("ZULIP_BOT_API_KEY"), "{err}");
    assert!(!err.contains("ZULIP_STREAM"), "only what is missing: {err}");
}
