//! A run killed (SIGKILL) while its question is pending, then `tether resume`d: the resumed run
//! offers the same question again on every channel — the terminal card again on a TTY, the
//! Zulip topic it was posted in without posting it again — and `human.timeout_secs` still
//! answers it. Real `tether` binary, fake model and Zulip servers.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Question, Store};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;
use tether_testkit::zulip_server::{Endpoint, FakeZulipServer};

use crate::common::pty::Pty;
use crate::common::{PATIENCE, cmd, model_table, runtime, text, wait_output};

const QUESTION: &str = "Which colour should the logo be?";
const ANSWER: &str = "Teal, please.";
const ON_TIMEOUT: &str = "Nobody answered: pick blue.";

/// The agent: asks its question until a request carries `marker` (the human's answer, or the
/// timeout's), then keeps the promise.
fn agent(marker: &'static str) -> Script {
    Script::from_fn(move |req: &Request| {
        if serde_json::to_string(req).unwrap().contains(marker) {
            Turn::text("Going with it. <promise>DONE</promise>")
        } else {
            Turn::tool(
                "ask_human",
                json!({"question": QUESTION, "context": "the logo", "confidence": 10}),
            )
        }
    })
}

/// A workspace whose agent talks to `model`, with `human` as its `[human]` table.
fn workspace(model: &FakeModelServer, human: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let toml = model_table("model", Api::OpenAiChat, model, "fake");
    fs::write(
        dir.path().join("tether.toml"),
        format!("{toml}\n[human]\n{human}"),
    )
    .unwrap();
    dir
}

/// The Zulip bot of `zulip` in `c`'s environment.
fn with_zulip<'a>(c: &'a mut Command, zulip: &FakeZulipServer) -> &'a mut Command {
    c.env("ZULIP_SERVER_URL", zulip.server_url())
        .env("ZULIP_BOT_EMAIL", zulip.bot_email())
        .env("ZULIP_BOT_API_KEY", zulip.api_key())
        .env("ZULIP_STREAM", zulip.stream())
}

/// `tether ralph` asking until its promise, in the background, stdin not a terminal.
fn start_ralph(dir: &Path, zulip: Option<&FakeZulipServer>) -> Child {
    let mut c = cmd(
        dir,
        &[
            "ralph",
            "Choose the logo's colour.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "3",
        ],
    );
    if let Some(z) = zulip {
        with_zulip(&mut c, z);
    }
    c.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn store(dir: &Path) -> Store {
    Store::open(dir.join(".tether/tether.db")).unwrap()
}

/// The pending question, once there is one.
fn pending(dir: &Path) -> Question {
    wait_until("the question to be stored", PATIENCE, || {
        store(dir).pending_questions().ok()?.into_iter().next()
    })
    .unwrap()
}

/// Kills `child` with SIGKILL and reaps it.
fn kill_9(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_resumed_run_offers_its_pending_question_again_without_posting_it_again() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(agent(ANSWER))).unwrap();
    let zulip = rt
        .block_on(
            FakeZulipServer::builder()
                .longpoll_timeout(Duration::from_millis(300))
                .start(),
        )
        .unwrap();
    let dir = workspace(&model, "channels = [\"cli\", \"zulip\"]\n");
    let dir = dir.path();

    let run = start_ralph(dir, Some(&zulip));
    let question = pending(dir);
    let topic = wait_until("the question's Zulip post to be recorded", PATIENCE, || {
        let posts = store(dir).posts(&question.id).ok()?;
        let post = posts.into_iter().find(|p| p.channel == "zulip")?;
        Some(post.external_ref["topic"].as_str()?.to_owned())
    })
    .unwrap();
    kill_9(run);
    assert_eq!(zulip.bot_messages().len(), 1);
    let posted = zulip.count(Endpoint::SendMessage);
    let registered = zulip.count(Endpoint::Register);

    let resumed = Pty::start_with(dir, "resume", |c| {
        with_zulip(c, &zulip);
    });
    let card = format!("a question for you ({})", question.id);
    wait_until(
        "the terminal card and the Zulip wait of the resumed run",
        PATIENCE,
        || {
            (resumed.screen().contains(&card) && zulip.count(Endpoint::Register) > registered)
                .then_some(())
        },
    )
    .unwrap();
    zulip.post_as_human(&topic, ANSWER);
    let (code, out) = resumed.wait();

    assert_eq!(code, 0, "{out}");
    assert!(out.contains(QUESTION), "the card shows the question: {out}");
    assert!(
        out.contains("(answered on zulip by "),
        "the card closes saying who answered: {out}"
    );
    assert!(out.contains("promise kept"), "{out}");
    // Nothing was posted again; the one new message is the run's `done` notice, in the topic.
    assert_eq!(
        zulip.count(Endpoint::SendMessage),
        posted + 1,
        "nothing was posted again: {:?}",
        zulip.bot_messages()
    );
    let last = zulip.bot_messages().pop().unwrap();
    assert_eq!(last.topic, topic);
    assert!(last.content.ends_with(" is done."), "{}", last.content);
    let answered = store(dir).question(&question.id).unwrap();
    assert_eq!(
        (answered.answer.as_deref(), answered.channel.as_deref()),
        (Some(ANSWER), Some("zulip"))
    );
    assert!(
        model.requests().iter().any(|r| r.raw_body.contains(ANSWER)),
        "the answer reached the agent"
    );
}

#[test]
fn the_timeout_answers_a_question_left_pending_by_a_killed_run() {
    let rt = runtime();
    let model = rt
        .block_on(FakeModelServer::start(agent(ON_TIMEOUT)))
        .unwrap();
    let dir = workspace(
        &model,
        &format!("timeout_secs = 5\non_timeout = \"{ON_TIMEOUT}\"\n"),
    );
    let dir = dir.path();

    let run = start_ralph(dir, None);
    let question = pending(dir);
    kill_9(run);
    assert!(
        store(dir).question(&question.id).unwrap().answer.is_none(),
        "killed before the timeout"
    );

    let out = wait_output(crate::common::spawn(dir, &["resume"]));
    let (code, out) = (out.status.code().unwrap_or(-1), text(&out.stdout));
    assert_eq!(code, 0, "{out}");
    let answered = store(dir).question(&question.id).unwrap();
    assert_eq!(
        (answered.answer.as_deref(), answered.channel.as_deref()),
        (Some(ON_TIMEOUT), Some("timeout"))
    );
    assert!(
        model
            .requests()
            .iter()
            .any(|r| r.raw_body.contains(ON_TIMEOUT)),
        "the timeout's answer reached the agent"
    );
}
