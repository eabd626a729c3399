//! Three `tether ask` processes on one Telegram bot at once — two in one workspace, one in
//! another — as a script, an editor's `tether mcp` and a run would be: one of them polls (no
//! 409 conflict ever), every reply and button press reaches the process that asked, and when
//! the polling process exits with its answer another takes the poll over. Real `tether`
//! binaries, the fake Bot API.

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::{Method, TelegramFault};
use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, runtime, text, wait_output};

const CHAT: i64 = FakeTelegramServer::GROUP;

fn workspace(telegram: &FakeTelegramServer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[human]\nchannels = [\"telegram\"]\n\n[telegram]\napi_url = \"{}\"\n",
            telegram.api_url()
        ),
    )
    .unwrap();
    dir
}

fn ask(dir: &Path, telegram: &FakeTelegramServer, runtime_dir: &Path, args: &[&str]) -> Child {
    let mut all = vec!["ask"];
    all.extend_from_slice(args);
    cmd(dir, &all)
        .env("TELEGRAM_BOT_TOKEN", telegram.token())
        .env("TELEGRAM_CHAT_ID", CHAT.to_string())
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The bot's message whose text contains `question`.
fn posted(telegram: &FakeTelegramServer, question: &str) -> i64 {
    telegram
        .bot_messages(CHAT)
        .into_iter()
        .find(|m| m.text.contains(question))
        .unwrap()
        .message_id
}

fn answered(child: Child) -> String {
    let out = wait_output(child);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}

#[test]
fn three_processes_on_one_bot_share_one_poller_and_each_gets_its_answer() {
    let rt = runtime();
    let telegram = rt
        .block_on(
            FakeTelegramServer::builder()
                .longpoll_timeout(Duration::from_millis(200))
                .start(),
        )
        .unwrap();
    let (one, two) = (workspace(&telegram), workspace(&telegram));
    let runtime_dir = tempfile::tempdir().unwrap();
    let reg = runtime_dir.path();
    let first = ask(one.path(), &telegram, reg, &["First question?"]);
    let second = ask(
        one.path(),
        &telegram,
        reg,
        &["Second question?", "--option", "Keep", "--option", "Drop"],
    );
    let third = ask(two.path(), &telegram, reg, &["Third question?"]);
    wait_until("three questions posted", PATIENCE, || {
        (telegram.bot_messages(CHAT).len() == 3).then_some(())
    })
    .unwrap();
    // Everyone waits through a few long-polls: one poller, no conflict.
    let polls = telegram.count(Method::GetUpdates);
    rt.block_on(telegram.wait_for_count(Method::GetUpdates, polls + 3, PATIENCE))
        .unwrap();
    assert_eq!(telegram.conflicts(), 0, "two processes polled at once");

    telegram.reply(
        &telegram.alice(),
        CHAT,
        posted(&telegram, "Third question?"),
        "three",
    );
    assert_eq!(answered(third), "three");

    let card = telegram
        .bot_messages(CHAT)
        .into_iter()
        .find(|m| m.text.contains("Second question?"))
        .unwrap();
    let data = card.reply_markup.as_ref().unwrap()["inline_keyboard"][1][0]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned();
    telegram.press(&telegram.bob(), CHAT, card.message_id, &data);
    assert_eq!(answered(second), "Drop");

    telegram.reply(
        &telegram.alice(),
        CHAT,
        posted(&telegram, "First question?"),
        "one",
    );
    assert_eq!(answered(first), "one");

    assert_eq!(telegram.conflicts(), 0, "two processes polled at once");
    assert_eq!(
        telegram.count(Method::SendMessage),
        3,
        "each question posted once"
    );
}

#[test]
fn the_token_never_reaches_the_logs_even_at_trace_level_with_faults() {
    let rt = runtime();
    let telegram = rt
        .block_on(
            FakeTelegramServer::builder()
                .longpoll_timeout(Duration::from_millis(200))
                .start(),
        )
        .unwrap();
    telegram.fault_at(Method::SendMessage, 0, TelegramFault::ConnectionReset);
    telegram.fault_at(Method::GetUpdates, 0, TelegramFault::ServerError(502));
    telegram.fault_at(Method::GetUpdates, 1, TelegramFault::ConnectionReset);
    let ws = workspace(&telegram);
    let runtime_dir = tempfile::tempdir().unwrap();
    let mut c = cmd(ws.path(), &["ask", "Logged question?"]);
    c.env("TELEGRAM_BOT_TOKEN", telegram.token())
        .env("TELEGRAM_CHAT_ID", CHAT.to_string())
        .env("XDG_RUNTIME_DIR", runtime_dir.path())
        .env("TETHER_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    wait_until("the question posted", PATIENCE, || {
        (telegram.bot_messages(CHAT).len() == 1).then_some(())
    })
    .unwrap();
    rt.block_on(telegram.wait_for_count(Method::GetUpdates, 3, PATIENCE))
        .unwrap();
    telegram.reply(
        &telegram.alice(),
        CHAT,
        posted(&telegram, "Logged question?"),
        "fine",
    );
    let out = wait_output(child);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "fine");
    let log = text(&out.stderr);
    assert!(
        log.contains("telegram request failed") && log.contains("telegram getUpdates failed"),
        "the faults were logged: {log}"
    );
    let secret = telegram.token().split_once(':').unwrap().1;
    assert!(!log.contains(secret), "the token is in the log:\n{log}");
}
