//! What the tether-human tests and benches share: a broker whose one channel is Zulip, played
//! by the fake Zulip server.

use std::sync::Arc;

use tether_config::{Secret, Workspace};
use tether_human::zulip::Zulip;
use tether_human::{Broker, Channel};
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
    let channel: Arc<dyn Channel> = Arc::new(Zulip::new(
        ZulipClient::new(&settings).unwrap(),
        journal.clone(),
    ));
    let broker = Broker::new(journal.clone(), ws.state_dir(), vec![channel]);
    (journal, broker)
}
