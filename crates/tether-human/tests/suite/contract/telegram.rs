//! Telegram for the contract: a question is the bot's message in a group; a reply to it
//! answers, and a follow-up replies to the conversation's first question.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_config::Workspace;
use tether_human::DynChannel;
use tether_store::Journal;
use tether_testkit::FakeTelegramServer;

use super::{Fake, LIMIT};

const CHAT: i64 = FakeTelegramServer::GROUP;

pub(crate) struct Telegram(FakeTelegramServer);

impl Telegram {
    /// The bot's questions (a question's text starts with ❓, a note's does not).
    fn asked(&self) -> Vec<tether_testkit::telegram_server::StoredMessage> {
        self.0
            .bot_messages(CHAT)
            .into_iter()
            .filter(|m| m.text.starts_with('❓'))
            .collect()
    }
}

impl Fake for Telegram {
    const NAME: &'static str = "telegram";
    /// The question's message id.
    type Post = i64;

    async fn start() -> Self {
        let server = FakeTelegramServer::builder()
            .longpoll_timeout(Duration::from_millis(200))
            .start()
            .await
            .unwrap();
        Telegram(server)
    }

    fn channel(&self, ws: &Workspace, journal: &Journal, shared: &Path) -> Arc<dyn DynChannel> {
        let client = crate::common::telegram_client(&self.0, CHAT, shared);
        Arc::new(tether_human::telegram::channel(
            client,
            journal.clone(),
            ws.state_dir(),
        ))
    }

    async fn question(&self, n: usize) -> Self::Post {
        tether_testkit::wait_until_async("a question on telegram", LIMIT, || {
            self.asked().get(n - 1).map(|m| m.message_id)
        })
        .await
        .unwrap()
    }

    /// A reply waits at Telegram until the poller takes it.
    async fn listening(&self) {}

    fn reply(&self, post: &Self::Post, text: &str) {
        self.0.reply(&self.0.alice(), CHAT, *post, text);
    }

    fn questions(&self) -> usize {
        self.asked().len()
    }

    fn notes(&self, post: &Self::Post) -> Vec<String> {
        self.0
            .bot_messages(CHAT)
            .into_iter()
            .filter(|m| m.reply_to == Some(*post) && !m.text.starts_with('❓'))
            .map(|m| m.text)
            .collect()
    }

    fn same_conversation(&self, first: &Self::Post, later: &Self::Post) -> bool {
        self.0
            .bot_messages(CHAT)
            .iter()
            .any(|m| m.message_id == *later && m.reply_to == Some(*first))
    }
}
