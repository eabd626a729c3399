//! Fixtures: a fake server with a short long-poll, and a client with fast retries pointed at it.

use std::time::Duration;

use tether_config::Secret;
use tether_testkit::zulip_server::FakeZulipServer;
use tether_zulip::{ApiOptions, ClientOptions, RetryPolicy, ZulipClient, ZulipSettings};

/// The bound on any wait in a test: generous, never reached when things work.
pub const WAIT: Duration = Duration::from_secs(10);

/// The topic most tests ask in.
pub const TOPIC: &str = "Agent Q #1 — x";

pub async fn server(longpoll_ms: u64) -> FakeZulipServer {
    FakeZulipServer::builder()
        .longpoll_timeout(Duration::from_millis(longpoll_ms))
        .start()
        .await
        .unwrap()
}

pub fn settings(server: &FakeZulipServer) -> ZulipSettings {
    ZulipSettings::new(
        &server.server_url(),
        server.bot_email(),
        Secret::new(server.api_key()),
        server.stream(),
    )
    .unwrap()
}

/// Retries in milliseconds rather than seconds.
pub fn fast_options() -> ClientOptions {
    ClientOptions {
        api: ApiOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            poll_timeout: Duration::from_secs(5),
        },
        retry: RetryPolicy {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(50),
            request_retries: 6,
        },
        catch_up_page: 1000,
    }
}

pub fn client(server: &FakeZulipServer) -> ZulipClient {
    ZulipClient::with_options(&settings(server), fast_options()).unwrap()
}

/// Bounds a future the test awaits, so a bug fails the test instead of hanging it.
pub async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("timed out waiting")
}
