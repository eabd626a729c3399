//! A Telegram reply that reaches another process of the machine — the one polling the bot —
//! is recorded in the team store, where the asking process waits (a workspace file would lose
//! it). Real `tether` binaries, the fake Bot API, a real PostgreSQL.

use std::process::Stdio;
use std::time::Duration;

use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::Method;
use tether_testkit::wait_until;

use super::{Machine, database};
use crate::common::{PATIENCE, runtime, text, wait_output};

const CHAT: i64 = FakeTelegramServer::GROUP;

#[test]
fn a_telegram_reply_polled_by_another_workspace_reaches_the_asker_through_the_team_store() {
    let rt = runtime();
    let telegram = rt
        .block_on(
            FakeTelegramServer::builder()
                .longpoll_timeout(Duration::from_millis(200))
                .start(),
        )
        .unwrap();
    let db = database();
    let (one, two) = (
        Machine::new("alpha", &db.url()),
        Machine::new("alpha", &db.url()),
    );
    let config = format!(
        "[human]\nchannels = [\"telegram\"]\n\n[telegram]\napi_url = \"{}\"\n",
        telegram.api_url()
    );
    for m in [&one, &two] {
        std::fs::write(m.path().join("tether.toml"), &config).unwrap();
    }
    let registry = tempfile::tempdir().unwrap();
    let ask = |m: &Machine, question: &str| {
        m.cmd(&["ask", question])
            .env("TELEGRAM_BOT_TOKEN", telegram.token())
            .env("TELEGRAM_CHAT_ID", CHAT.to_string())
            .env("XDG_RUNTIME_DIR", registry.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // The first asker polls the bot for both.
    let first = ask(&one, "First question?");
    wait_until("the first question posted", PATIENCE, || {
        (telegram.bot_messages(CHAT).len() == 1).then_some(())
    })
    .unwrap();
    rt.block_on(telegram.wait_for_count(Method::GetUpdates, 2, PATIENCE))
        .unwrap();
    let second = ask(&two, "Second question?");
    let post = wait_until("the second question posted", PATIENCE, || {
        telegram
            .bot_messages(CHAT)
            .into_iter()
            .find(|m| m.text.contains("Second question?"))
            .map(|m| m.message_id)
    })
    .unwrap();
    let polls = telegram.count(Method::GetUpdates);
    rt.block_on(telegram.wait_for_count(Method::GetUpdates, polls + 2, PATIENCE))
        .unwrap();
    telegram.reply(&telegram.alice(), CHAT, post, "two");
    let out = wait_output(second);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "two");
    assert!(!two.path().join(".tether/tether.db").exists());

    let first_post = telegram
        .bot_messages(CHAT)
        .into_iter()
        .find(|m| m.text.contains("First question?"))
        .unwrap()
        .message_id;
    telegram.reply(&telegram.alice(), CHAT, first_post, "one");
    let out = wait_output(first);
    assert_eq!(text(&out.stdout).trim(), "one", "{}", text(&out.stderr));
}
