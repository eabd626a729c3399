//! What the tether-human tests and benches share: a broker whose one channel is Zulip, played
//! by the fake Zulip server.

use std::sync::Arc;

use tether_config::{Secret, Workspace};
use tether_human::{Broker, DynChannel};
use tether_store::{Journal, Store};
use tether_testkit::zulip_server::FakeZulipServer;
use tether_zulip::{ZulipClient, ZulipSettings};

/// The workspace's journal, and a broker on it whose one channel is `server`'s Zulip.
pub fn zulip_broker(server: &FakeZulipServer, ws: &Workspace) -> (Journal, Broker) {
    let settings = ZulipSettings::new(
        &server.server_url(),
        server.bot_email(),
        Secret::new(server.api_key().to_owned()),
        server.stream(),
    )
    .unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let channel: Arc<dyn DynChannel> = Arc::new(tether_human::zulip::channel(
        ZulipClient::new(&settings).unwrap(),
        journal.clone(),
    ));
    let broker = Broker::new(journal.clone(), ws.state_dir(), vec![channel]);
    (journal, broker)
}

/// The workspace's journal, and a broker on it whose one channel is `server`'s Telegram bot
/// asking in `chat`, with the bot's registry (and poller lock) under `registry`. Short timings.
/// (Not every includer of this module uses it: the `human` bench does not.)
#[allow(dead_code)]
pub fn telegram_broker(
    server: &tether_testkit::FakeTelegramServer,
    chat: i64,
    ws: &Workspace,
    registry: &std::path::Path,
) -> (Journal, Broker) {
    let (journal, channel) = telegram_channel(server, chat, ws, registry);
    let broker = Broker::new(journal.clone(), ws.state_dir(), vec![channel]);
    (journal, broker)
}

/// The workspace's journal and the Telegram channel of [`telegram_broker`].
#[allow(dead_code)]
pub fn telegram_channel(
    server: &tether_testkit::FakeTelegramServer,
    chat: i64,
    ws: &Workspace,
    registry: &std::path::Path,
) -> (
    Journal,
    Arc<tether_human::chat::Chat<tether_human::telegram::Telegram>>,
) {
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let channel = Arc::new(tether_human::telegram::channel(
        telegram_client(server, chat, registry),
        journal.clone(),
        ws.state_dir(),
    ));
    (journal, channel)
}

/// A client of `server`'s bot asking in `chat`, with the bot's registry (and poller lock)
/// under `registry`. Short timings.
#[allow(dead_code)]
pub fn telegram_client(
    server: &tether_testkit::FakeTelegramServer,
    chat: i64,
    registry: &std::path::Path,
) -> tether_telegram::TelegramClient {
    use std::time::Duration;
    use tether_telegram::{ApiOptions, ClientOptions, RetryPolicy, TelegramClient};
    let settings = tether_telegram::TelegramSettings::new(
        &server.api_url(),
        Secret::new(server.token().to_owned()),
        &chat.to_string(),
    )
    .unwrap();
    let options = ClientOptions {
        api: ApiOptions {
            poll_timeout: Duration::from_secs(1),
            ..ApiOptions::default()
        },
        retry: RetryPolicy {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(50),
            request_retries: 6,
        },
        registry_base: Some(registry.to_path_buf()),
        lock_retry: Duration::from_millis(20),
        unknown_recheck: Duration::from_millis(20),
    };
    TelegramClient::new(&settings, options).unwrap()
}
