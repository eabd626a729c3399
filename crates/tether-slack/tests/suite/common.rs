//! Fixtures: a fake Slack, and a client with fast retries and a fast liveness check pointed at
//! it.

#![allow(
    dead_code,
    reason = "shared with the soak bench, which uses parts of it"
)]

use std::time::Duration;

use serde_json::Value;
use tether_config::Secret;
use tether_slack::{
    ApiOptions, ClientOptions, PendingReply, QuestionMessage, RawSlackSettings, RetryPolicy,
    SlackClient, SlackSettings, SocketOptions, Thread,
};
use tether_testkit::FakeSlackServer;
use tokio_util::sync::CancellationToken;

/// The bound on any wait in a test: generous, never reached when things work.
pub const WAIT: Duration = Duration::from_secs(10);

pub async fn server() -> FakeSlackServer {
    FakeSlackServer::start().await.unwrap()
}

pub fn settings(server: &FakeSlackServer) -> SlackSettings {
    SlackSettings::new(&RawSlackSettings {
        api_url: Some(server.api_url()),
        bot_token: Some(Secret::new(server.bot_token())),
        app_token: Some(Secret::new(server.app_token())),
        channel: Some(FakeSlackServer::CHANNEL.into()),
        ..RawSlackSettings::with_default_envs()
    })
    .unwrap()
}

/// Retries in milliseconds rather than seconds.
pub fn fast_options() -> ClientOptions {
    ClientOptions {
        api: ApiOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
        },
        socket: SocketOptions {
            connect_timeout: Duration::from_secs(5),
            hello_timeout: Duration::from_secs(5),
            ping_every: Duration::from_millis(100),
            dead_after: Duration::from_millis(500),
            linger: Duration::from_millis(50),
        },
        retry: RetryPolicy {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(50),
            request_retries: 6,
        },
        catch_up_page: 200,
    }
}

pub fn client(server: &FakeSlackServer) -> SlackClient {
    SlackClient::with_options(&settings(server), fast_options()).unwrap()
}

/// Bounds a future the test awaits, so a bug fails the test instead of hanging it.
pub async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("timed out waiting")
}

/// The blocks of a question with `options`.
pub fn question(text: &str, options: &[String], follow_up: bool) -> (String, Value) {
    QuestionMessage {
        question: text,
        context: "",
        confidence: 30,
        options,
        follow_up,
    }
    .render()
}

/// Posts a question (a new thread, or a follow-up in `thread`).
pub async fn ask(
    client: &SlackClient,
    text: &str,
    options: &[String],
    thread: Option<&Thread>,
) -> PendingReply {
    let (fallback, blocks) = question(text, options, thread.is_some());
    within(client.post_question(
        &fallback,
        blocks,
        options.len(),
        thread,
        &CancellationToken::new(),
    ))
    .await
    .unwrap()
}

pub fn labels(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}
