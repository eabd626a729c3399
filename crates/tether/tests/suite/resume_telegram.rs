//! A run asking on Telegram killed (SIGKILL) while its question waits, a reply given while no
//! tether process polls the bot, then `tether resume`: the resumed run waits on the same
//! message — never posting it again — and gets the reply Telegram kept queued; its done notice
//! replies to the question. Real `tether`
//! binary, fake model and Bot API servers. Its debug log, with network faults in it, never
//! shows the bot token.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Question, Store};
use tether_testkit::FakeTelegramServer;
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::telegram_server::{Method, TelegramFault};
use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, model_table, runtime, wait_exit};

const QUESTION: &str = "Which colour should the logo be?";
const ANSWER: &str = "Teal, please.";
const CHAT: i64 = FakeTelegramServer::GROUP;

/// The agent: asks until a request carries the answer, then keeps the promise.
fn agent() -> Script {
    Script::from_fn(move |req: &Request| {
        if serde_json::to_string(req).unwrap().contains(ANSWER) {
            Turn::text("Going with it. <promise>DONE</promise>")
        } else {
            Turn::tool(
                "ask_human",
                json!({"question": QUESTION, "context": "the logo", "confidence": 10,
                       "options": ["Teal", "Blue"]}),
            )
        }
    })
}

/// `tether <args>` in `dir` asking on `telegram`'s bot, its registry under `runtime_dir`.
fn telegram_cmd(
    dir: &Path,
    args: &[&str],
    telegram: &FakeTelegramServer,
    runtime_dir: &Path,
) -> Command {
    let mut c = cmd(dir, args);
    c.env("TELEGRAM_BOT_TOKEN", telegram.token())
        .env("TELEGRAM_CHAT_ID", CHAT.to_string())
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
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

fn kill_9(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_killed_run_resumes_on_the_same_message_and_gets_the_reply_given_meanwhile() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(agent())).unwrap();
    let telegram = rt
        .block_on(
            FakeTelegramServer::builder()
                .longpoll_timeout(Duration::from_millis(300))
                .start(),
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runtime_dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[human]\nchannels = [\"cli\", \"telegram\"]\n\n[telegram]\napi_url = \"{}\"\n",
            model_table("model", Api::OpenAiChat, &model, "fake"),
            telegram.api_url()
        ),
    )
    .unwrap();
    let dir = dir.path();
    let ralph = [
        "ralph",
        "Choose the logo's colour.",
        "--completion-promise",
        "DONE",
        "--max-iterations",
        "3",
    ];

    let run = telegram_cmd(dir, &ralph, &telegram, runtime_dir.path())
        .spawn()
        .unwrap();
    let question = pending(dir);
    let message = wait_until("the Telegram post to be recorded", PATIENCE, || {
        let posts = store(dir).posts(&question.id).ok()?;
        let post = posts.into_iter().find(|p| p.channel == "telegram")?;
        post.external_ref["message_id"].as_i64()
    })
    .unwrap();
    rt.block_on(telegram.wait_for_count(Method::GetUpdates, 1, PATIENCE))
        .unwrap();
    kill_9(run);
    let posted = telegram.count(Method::SendMessage);
    assert_eq!(telegram.bot_messages(CHAT).len(), 1);
    assert!(
        telegram.bot_messages(CHAT)[0].reply_markup.is_some(),
        "the options are buttons"
    );

    // Nobody polls now: Telegram keeps the reply queued.
    telegram.reply(&telegram.alice(), CHAT, message, ANSWER);

    // The resumed run's first long-poll breaks and its first retry is refused: both are
    // logged (at debug, everything is), never with the token.
    let polls = telegram.count(Method::GetUpdates);
    telegram.fault_at(Method::GetUpdates, polls, TelegramFault::ConnectionReset);
    telegram.fault_at(
        Method::GetUpdates,
        polls + 1,
        TelegramFault::ServerError(502),
    );
    let log = runtime_dir.path().join("resume.log");
    let mut resumed = telegram_cmd(dir, &["resume"], &telegram, runtime_dir.path())
        .env("TETHER_LOG", "debug")
        .stderr(fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let code = wait_exit(&mut resumed).code();
    let log = fs::read_to_string(&log).unwrap();
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("getUpdates failed"),
        "the faults were logged: {log}"
    );
    let secret = telegram.token().split_once(':').unwrap().1;
    assert!(
        !log.contains(secret),
        "the token leaked into the log: {log}"
    );
    // The question was not posted again: the one new message is the run's done notice,
    // replying to it.
    let messages = telegram.bot_messages(CHAT);
    assert_eq!(
        telegram.count(Method::SendMessage),
        posted + 1,
        "{messages:?}"
    );
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[1].text.ends_with("is done."), "{messages:?}");
    assert_eq!(messages[1].reply_to, Some(message));
    let answered = store(dir).question(&question.id).unwrap();
    assert_eq!(
        (answered.answer.as_deref(), answered.channel.as_deref()),
        (Some(ANSWER), Some("telegram"))
    );
    assert!(
        model.requests().iter().any(|r| r.raw_body.contains(ANSWER)),
        "the answer reached the agent"
    );
}
