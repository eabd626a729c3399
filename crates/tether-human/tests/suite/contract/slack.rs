//! Slack for the contract: a question is a message with blocks; its thread is the
//! conversation; a reply is a person's message in the thread.

use std::path::Path;
use std::sync::Arc;

use tether_config::{Secret, Workspace};
use tether_human::DynChannel;
use tether_slack::{RawSlackSettings, SlackClient, SlackSettings};
use tether_store::Journal;
use tether_testkit::FakeSlackServer;

use super::{Fake, LIMIT};

pub(crate) struct Slack(FakeSlackServer);

impl Fake for Slack {
    const NAME: &'static str = "slack";
    /// The question's ts and its thread's.
    type Post = (String, String);

    async fn start() -> Self {
        Slack(FakeSlackServer::start().await.unwrap())
    }

    fn channel(&self, ws: &Workspace, journal: &Journal, shared: &Path) -> Arc<dyn DynChannel> {
        let settings = SlackSettings::new(&RawSlackSettings {
            api_url: Some(self.0.api_url()),
            bot_token: Some(Secret::new(self.0.bot_token())),
            app_token: Some(Secret::new(self.0.app_token())),
            channel: Some(FakeSlackServer::CHANNEL.into()),
            ..RawSlackSettings::with_default_envs()
        })
        .unwrap();
        Arc::new(tether_human::slack::channel_with_registry_dir(
            SlackClient::new(&settings).unwrap(),
            journal.clone(),
            ws.state_dir(),
            shared.to_path_buf(),
        ))
    }

    async fn question(&self, n: usize) -> Self::Post {
        let posted = self.0.wait_for_questions(n, LIMIT).await.unwrap();
        let m = &posted[n - 1];
        let thread = m.thread_ts.clone().unwrap_or_else(|| m.ts.clone());
        (m.ts.clone(), thread)
    }

    /// The socket is open.
    async fn listening(&self) {
        self.0.wait_for_sockets(1, LIMIT).await.unwrap();
    }

    fn reply(&self, post: &Self::Post, text: &str) {
        self.0.reply(&post.1, FakeSlackServer::HUMAN, text);
    }

    fn questions(&self) -> usize {
        self.0.questions().len()
    }

    fn notes(&self, post: &Self::Post) -> Vec<String> {
        self.0
            .notes_in(&post.1)
            .into_iter()
            .map(|m| m.text)
            .collect()
    }

    fn same_conversation(&self, first: &Self::Post, later: &Self::Post) -> bool {
        first.1 == later.1
    }
}
