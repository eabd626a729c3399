//! The broker's Telegram channel against the fake Bot API: a reply to the question (or a button)
//! answers it, whichever process polls; faults and restarts lose and double nothing.

use std::time::Duration;

use tether_config::Workspace;
use tether_human::Broker;
use tether_store::{Journal, NewQuestion};
use tether_testkit::FakeTelegramServer;
use tether_testkit::telegram_server::Method;

use crate::common::telegram_broker;

pub(super) const CHAT: i64 = FakeTelegramServer::GROUP;
pub(super) const LIMIT: Duration = Duration::from_secs(10);

pub(super) struct Setup {
    pub(super) _dirs: (tempfile::TempDir, tempfile::TempDir),
    pub(super) ws: Workspace,
    pub(super) registry: std::path::PathBuf,
    pub(super) journal: Journal,
    pub(super) server: FakeTelegramServer,
    pub(super) broker: Broker,
}

pub(super) async fn setup() -> Setup {
    let server = FakeTelegramServer::builder()
        .longpoll_timeout(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let reg = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    std::fs::create_dir_all(ws.state_dir()).unwrap();
    let (journal, broker) = telegram_broker(&server, CHAT, &ws, reg.path());
    Setup {
        registry: reg.path().to_path_buf(),
        _dirs: (dir, reg),
        ws,
        journal,
        server,
        broker,
    }
}

pub(super) fn ask(options: &[&str]) -> NewQuestion {
    NewQuestion {
        question: "Merge the migration now?".into(),
        context: "all tests pass".into(),
        confidence: Some(20),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
        ..NewQuestion::default()
    }
}

/// The bot's latest message in the chat once `n` `sendMessage` requests were made.
pub(super) async fn posted(server: &FakeTelegramServer, n: usize) -> i64 {
    server
        .wait_for_count(Method::SendMessage, n, LIMIT)
        .await
        .unwrap();
    tether_testkit::wait_until_async("the message stored", LIMIT, || {
        server.bot_messages(CHAT).last().map(|m| m.message_id)
    })
    .await
    .unwrap()
}

mod answers;
mod faults;
mod places;
