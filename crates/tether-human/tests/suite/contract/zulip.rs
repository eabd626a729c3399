//! Zulip for the contract: a question is a message in a topic; a reply is Alice's message in it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_config::{Secret, Workspace};
use tether_human::DynChannel;
use tether_store::Journal;
use tether_testkit::FakeZulipServer;
use tether_zulip::{ZulipClient, ZulipSettings};

use super::{Fake, LIMIT};

pub(crate) struct Zulip(FakeZulipServer);

impl Fake for Zulip {
    const NAME: &'static str = "zulip";
    /// The message's id and its topic.
    type Post = (u64, String);

    async fn start() -> Self {
        let server = FakeZulipServer::builder()
            .longpoll_timeout(Duration::from_millis(200))
            .start()
            .await
            .unwrap();
        Zulip(server)
    }

    fn channel(&self, _ws: &Workspace, journal: &Journal, _shared: &Path) -> Arc<dyn DynChannel> {
        let settings = ZulipSettings::new(
            &self.0.server_url(),
            self.0.bot_email(),
            Secret::new(self.0.api_key().to_owned()),
            self.0.stream(),
        )
        .unwrap();
        let client = ZulipClient::new(&settings).unwrap();
        Arc::new(tether_human::zulip::channel(client, journal.clone()))
    }

    async fn question(&self, n: usize) -> Self::Post {
        tether_testkit::wait_until_async("a question on zulip", LIMIT, || {
            let m = self.0.bot_messages().into_iter().nth(n - 1)?;
            Some((m.id, m.topic))
        })
        .await
        .unwrap()
    }

    /// The question's queue is registered before it is posted.
    async fn listening(&self) {}

    fn reply(&self, post: &Self::Post, text: &str) {
        self.0.post_as_human(&post.1, text);
    }

    fn questions(&self) -> usize {
        self.0
            .bot_messages()
            .iter()
            .filter(|m| m.content.contains("The agent is waiting"))
            .count()
    }

    fn notes(&self, post: &Self::Post) -> Vec<String> {
        self.0
            .messages_in(&post.1)
            .into_iter()
            .filter(|m| m.sender.id == FakeZulipServer::BOT_ID && m.id > post.0)
            .map(|m| m.content)
            .collect()
    }

    fn same_conversation(&self, first: &Self::Post, later: &Self::Post) -> bool {
        first.1 == later.1
    }
}
