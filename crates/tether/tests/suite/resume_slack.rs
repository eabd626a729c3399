//! Slack end to end with the real `tether` binary: a run whose agent asks is killed (SIGKILL)
//! while its question waits in Slack, a human answers in the thread while nothing listens, and
//! `tether resume` waits on the same post — posting nothing again — and delivers that answer to
//! the agent. A second run answers a choice question with a button.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Question, Store};
use tether_testkit::FakeSlackServer;
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, model_table, runtime, wait_exit};

const QUESTION: &str = "Which colour should the logo be?";
const ANSWER: &str = "Teal, please.";

/// The agent: asks (with `options`) until a request carries `marker`, then keeps the promise.
fn agent(marker: &'static str, options: &'static [&'static str]) -> Script {
    Script::from_fn(move |req: &Request| {
        if serde_json::to_string(req).unwrap().contains(marker) {
            Turn::text("Going with it. <promise>DONE</promise>")
        } else {
            let mut args = json!({"question": QUESTION, "context": "the logo", "confidence": 10});
            if !options.is_empty() {
                args["options"] = json!(options);
            }
            Turn::tool("ask_human", args)
        }
    })
}

/// A workspace whose agent talks to `model` and whose human is reached on `slack`.
fn workspace(model: &FakeModelServer, slack: &FakeSlackServer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let toml = model_table("model", Api::OpenAiChat, model, "fake");
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{toml}\n[human]\nchannels = [\"slack\"]\n\n[slack]\nchannel = \"{}\"\napi_url = \"{}\"\n",
            FakeSlackServer::CHANNEL,
            slack.api_url()
        ),
    )
    .unwrap();
    dir
}

/// `tether <args>` with the Slack bot's tokens (and a private registry of waits).
fn with_slack(mut c: Command, slack: &FakeSlackServer, dir: &Path) -> Command {
    c.env("SLACK_BOT_TOKEN", slack.bot_token())
        .env("SLACK_APP_TOKEN", slack.app_token())
        .env("TETHER_SLACK_REGISTRY", dir.join(".slack-waits"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn start_ralph(dir: &Path, slack: &FakeSlackServer) -> Child {
    let c = cmd(
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
    with_slack(c, slack, dir).spawn().unwrap()
}

fn store(dir: &Path) -> Store {
    Store::open(dir.join(".tether/tether.db")).unwrap()
}

fn pending(dir: &Path) -> Question {
    wait_until("the question to be stored", PATIENCE, || {
        store(dir).pending_questions().ok()?.into_iter().next()
    })
    .unwrap()
}

/// The ts of the question's recorded Slack post.
fn posted_ts(dir: &Path, question: &Question) -> String {
    wait_until("the question's Slack post to be recorded", PATIENCE, || {
        let posts = store(dir).posts(&question.id).ok()?;
        let post = posts.into_iter().find(|p| p.channel == "slack")?;
        Some(post.external_ref["ts"].as_str()?.to_owned())
    })
    .unwrap()
}

#[test]
fn a_killed_run_resumes_on_the_same_slack_post_and_gets_the_answer_given_meanwhile() {
    let rt = runtime();
    let model = rt
        .block_on(FakeModelServer::start(agent(ANSWER, &[])))
        .unwrap();
    let slack = rt.block_on(FakeSlackServer::start()).unwrap();
    let dir = workspace(&model, &slack);
    let dir = dir.path();

    let mut run = start_ralph(dir, &slack);
    let question = pending(dir);
    let ts = posted_ts(dir, &question);
    run.kill().unwrap(); // SIGKILL while the question waits
    run.wait().unwrap();
    assert_eq!(slack.questions().len(), 1);
    wait_until("the killed process's socket to close", PATIENCE, || {
        (slack.open_sockets() == 0).then_some(())
    })
    .unwrap();
    slack.reply(&ts, FakeSlackServer::HUMAN, ANSWER);

    let mut resumed = with_slack(cmd(dir, &["resume"]), &slack, dir)
        .spawn()
        .unwrap();
    let status = wait_exit(&mut resumed);
    assert!(status.success(), "{status:?}");
    assert_eq!(slack.questions().len(), 1, "nothing was posted again");
    let answered = store(dir).question(&question.id).unwrap();
    assert_eq!(
        (answered.answer.as_deref(), answered.channel.as_deref()),
        (Some(ANSWER), Some("slack"))
    );
    assert!(
        model.requests().iter().any(|r| r.raw_body.contains(ANSWER)),
        "the answer reached the agent"
    );
}

#[test]
fn a_choice_question_is_answered_with_a_button() {
    let rt = runtime();
    let model = rt
        .block_on(FakeModelServer::start(agent("Purple", &["Teal", "Purple"])))
        .unwrap();
    let slack = rt.block_on(FakeSlackServer::start()).unwrap();
    let dir = workspace(&model, &slack);
    let dir = dir.path();

    let mut run = start_ralph(dir, &slack);
    let question = pending(dir);
    let ts = posted_ts(dir, &question);
    wait_until("the run's socket", PATIENCE, || {
        (slack.open_sockets() == 1).then_some(())
    })
    .unwrap();
    slack.press_button(&ts, FakeSlackServer::HUMAN, "tether_option_1");
    let status = wait_exit(&mut run);
    assert!(status.success(), "{status:?}");
    let answered = store(dir).question(&question.id).unwrap();
    assert_eq!(
        (
            answered.answer.as_deref(),
            answered.choice,
            answered.channel.as_deref()
        ),
        (Some("Purple"), Some(1), Some("slack"))
    );
}
