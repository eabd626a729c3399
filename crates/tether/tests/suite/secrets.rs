//! No API key leaks: `tether ralph` runs with its model key and the Zulip bot's key in the
//! environment, trace logging on, an agent that calls tools and asks a human (answered with
//! `tether answer`); then every file of the workspace (the store with its WAL, transcripts,
//! logs) and everything printed is searched for the keys. The servers require the keys, so the
//! run only works if they were really sent.

pub(super) mod support;
mod unreachable;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::zulip_server::FakeZulipServer;

use crate::common::{PATIENCE, cmd, model_table, pending_question_by, runtime, text};
use support::{Running, base64, hits_in, needles, scan_tree};

pub(super) const MODEL_KEY: &str = "sk-tether-LEAKCHECK-5f0c9e27a1d84b36";
pub(super) const ZULIP_KEY: &str = "zulip-LEAKCHECK-93be1a7c40d25f68";
const WRONG_KEY: &str = "sk-tether-WRONGKEY-0b7d2e91c6a35f48";
pub(super) const MODEL_VAR: &str = "TETHER_SECRETS_TEST_MODEL_KEY";
pub(super) const ZULIP_VAR: &str = "TETHER_SECRETS_TEST_ZULIP_KEY";

/// `tether -vv <args>` in `dir` with trace logging and the keys in its environment.
fn tether(dir: &Path, model_key: &str, args: &[&str]) -> Command {
    let mut c = cmd(dir, &["-vv"]);
    c.args(args)
        .env("TETHER_LOG", "trace")
        .env(MODEL_VAR, model_key)
        .env(ZULIP_VAR, ZULIP_KEY);
    c
}

fn model_toml(api: Api, server: &FakeModelServer) -> String {
    let table = model_table("model", api, server, "fake");
    format!("{table}api_key_env = \"{MODEL_VAR}\"\n")
}

/// The first pending question, listed with the keys in the environment too.
fn pending(dir: &Path) -> Value {
    pending_question_by(|args| tether(dir, MODEL_KEY, args).output().unwrap())
}

#[test]
fn the_search_finds_a_planted_key() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".tether/runs")).unwrap();
    fs::write(
        dir.path().join(".tether/runs/x.jsonl"),
        format!("{{\"k\":\"{MODEL_KEY}\"}}"),
    )
    .unwrap();
    let (hits, files) = scan_tree(dir.path(), &needles("bot@example.com"));
    assert_eq!(files.len(), 1);
    assert_eq!(hits.len(), 2, "{hits:?}"); // the key and its distinctive part
    assert_eq!(base64(b"bot@x:k"), "Ym90QHg6aw==");
}

#[test]
fn a_run_that_asks_a_human_writes_no_key_anywhere() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "write",
            json!({"path": "notes.md", "content": "colour: undecided\n"}),
        ),
        Some((Some("write"), _)) => Turn::tool(
            "ask_human",
            json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
        ),
        Some((_, result)) => Turn::text(format!("Noted ({result}). <promise>DONE</promise>")),
    });
    let server = rt
        .block_on(
            FakeModelServer::builder(script)
                .require_key(MODEL_KEY)
                .start(),
        )
        .unwrap();
    let zulip = rt
        .block_on(
            FakeZulipServer::builder()
                .api_key(ZULIP_KEY)
                .longpoll_timeout(Duration::from_millis(200))
                .start(),
        )
        .unwrap();
    let needles = needles(zulip.bot_email());
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[human]\nchannels = [\"cli\", \"zulip\"]\n\n[zulip]\nserver_url = \"{}\"\nbot_email = \"{}\"\nstream = \"{}\"\napi_key_env = \"{ZULIP_VAR}\"\n",
            model_toml(Api::OpenAiChat, &server),
            zulip.server_url(),
            zulip.bot_email(),
            zulip.stream()
        ),
    )
    .unwrap();

    let ralph = Running::start(tether(
        dir.path(),
        MODEL_KEY,
        &[
            "ralph",
            "Pick the logo colour.",
            "--completion-promise",
            "DONE",
        ],
    ));
    let q = pending(dir.path());
    rt.block_on(zulip.wait_for_messages(1, PATIENCE)).unwrap();
    // While the question waits, the store's WAL holds the latest writes.
    let (mut hits, waiting_files) = scan_tree(dir.path(), &needles);
    let answered = tether(
        dir.path(),
        MODEL_KEY,
        &[
            "answer",
            q["id"].as_str().unwrap(),
            "Blue.",
            "--as",
            "carol",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    let done = ralph.wait();
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));

    // The keys really went out: both servers refuse anything else.
    let requests = server.requests();
    assert!(requests.len() >= 3, "{} model requests", requests.len());
    let last = &requests.last().unwrap().raw_body;
    assert!(last.contains("Human replied: Blue."), "{last}");
    let zulip_requests = zulip.requests();
    assert!(!zulip_requests.is_empty());
    assert!(zulip_requests.iter().all(|r| r.authorized));
    assert!(text(&done.stderr).contains("TRACE"), "trace logging was on");

    let (after, files) = scan_tree(dir.path(), &needles);
    hits.extend(after);
    for (place, bytes) in [
        ("ralph stdout", &done.stdout),
        ("ralph stderr", &done.stderr),
        ("answer stdout", &answered.stdout),
        ("answer stderr", &answered.stderr),
    ] {
        hits.extend(hits_in(place, bytes, &needles));
    }
    let searched: Vec<String> = waiting_files
        .iter()
        .chain(&files)
        .map(|f| f.strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    assert!(
        searched.iter().any(|f| f.ends_with("tether.db-wal")),
        "{searched:?}"
    );
    assert!(
        searched.iter().any(|f| f.ends_with(".jsonl")),
        "{searched:?}"
    );
    assert!(hits.is_empty(), "the keys leaked: {hits:#?}");
}

#[test]
fn a_401_echoing_a_wrong_key_keeps_it_out_of_the_output_and_the_store() {
    for api in [Api::OpenAiChat, Api::OpenAiResponses, Api::Anthropic] {
        let rt = runtime();
        let server = rt
            .block_on(
                FakeModelServer::builder(Script::turns([Turn::text("never")]))
                    .require_key(MODEL_KEY)
                    .start(),
            )
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("tether.toml"), model_toml(api, &server)).unwrap();
        let out = Running::start(tether(
            dir.path(),
            WRONG_KEY,
            &["ralph", "Anything.", "--max-iterations", "1"],
        ))
        .wait();
        assert_ne!(out.status.code(), Some(0), "{api:?}");
        assert!(server.request_count() >= 1, "{api:?}: the request went out");
        // The 401's echo reached the store as the failure's text, redacted.
        let store = tether_store::Store::open(dir.path().join(".tether/tether.db")).unwrap();
        let run = store.latest_run().unwrap().unwrap();
        let failures: Vec<String> = store
            .events(&run.id, tether_store::Seq(0), usize::MAX)
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.event {
                Some(tether_store::Event::IterationFailed { error, .. }) => Some(error),
                _ => None,
            })
            .collect();
        drop(store);
        assert_eq!(failures.len(), 1, "{api:?}: {failures:?}");
        assert!(
            failures[0].contains("Incorrect API key provided: [redacted]"),
            "{api:?}: {}",
            failures[0]
        );
        let needles = needles("bot@example.com");
        let (mut hits, _) = scan_tree(dir.path(), &needles);
        hits.extend(hits_in("stdout", &out.stdout, &needles));
        hits.extend(hits_in("stderr", &out.stderr, &needles));
        assert!(hits.is_empty(), "{api:?}: the key leaked: {hits:#?}");
    }
}

/// The agent's `bash` runs `env`: its output goes to the transcript and to the model, so the
/// keys tether itself uses must not be in that command's environment.
#[test]
fn the_agents_shell_does_not_see_the_keys() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool("bash", json!({"command": "env"})),
        Some(_) => Turn::text("<promise>DONE</promise>"),
    });
    let server = rt
        .block_on(
            FakeModelServer::builder(script)
                .require_key(MODEL_KEY)
                .start(),
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[zulip]\napi_key_env = \"{ZULIP_VAR}\"\n",
            model_toml(Api::OpenAiChat, &server)
        ),
    )
    .unwrap();
    let out = Running::start(tether(
        dir.path(),
        MODEL_KEY,
        &["ralph", "Look around.", "--completion-promise", "DONE"],
    ))
    .wait();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = server.requests();
    let seen = &requests.last().unwrap().raw_body;
    assert!(seen.contains("TETHER_AGENT="), "the shell ran env: {seen}");
    let needles = needles("bot@example.com");
    let mut hits: Vec<String> = requests
        .iter()
        .flat_map(|r| {
            hits_in(
                &format!("model request {}", r.index),
                r.raw_body.as_bytes(),
                &needles,
            )
        })
        .collect();
    hits.extend(scan_tree(dir.path(), &needles).0);
    hits.extend(hits_in("stdout", &out.stdout, &needles));
    hits.extend(hits_in("stderr", &out.stderr, &needles));
    assert!(hits.is_empty(), "the key leaked: {hits:#?}");
}
