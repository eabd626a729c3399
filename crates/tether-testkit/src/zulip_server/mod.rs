//! A fake Zulip server: real HTTP on `127.0.0.1:0`, the endpoints a bot needs, the shapes and
//! error codes Zulip documents, and faults on demand.
//!
//! tether's Zulip client is tested against this rather than against mocks, so the tests exercise
//! its real HTTP, form encoding (JSON inside form fields), Basic auth, long-polling with
//! heartbeats, and recovery from every failure Zulip documents (429, 5xx, resets, `BAD_EVENT_QUEUE_ID`).
//!
//! Endpoints (under `/api/v1`): `POST /messages`, `GET /messages`, `POST /register`,
//! `GET /events`, `DELETE /events`, `GET /users/me`. Every request is recorded (credentials
//! never) and counted per [`Endpoint`].
//!
//! The test side plays the humans: [`FakeZulipServer::post_as_human`] posts into a topic (and
//! the message reaches every queue whose narrow matches, the bot's own queue included for the
//! bot's own messages), [`FakeZulipServer::messages`] reads everything posted.
//!
//! Faults ([`ZulipFault`]) are planned per endpoint and per request index: 429 with a float
//! `retry-after`, 5xx, a connection reset before or after the request took effect,
//! `BAD_EVENT_QUEUE_ID`, duplicate delivery. [`Action`]s happen at a chosen request (a human
//! reply landing right after the post, a queue expiring mid-wait), and
//! [`FakeZulipServer::set_topic_match`] makes narrows as loose as current Zulip main (or
//! looser) so the client's exact-topic filter is tested.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use tether_testkit::zulip_server::{Action, Endpoint, FakeZulipServer, Moment, ZulipFault};
//!
//! let server = FakeZulipServer::builder()
//!     .longpoll_timeout(Duration::from_millis(50))
//!     .start()
//!     .await?;
//! server.fault_at(Endpoint::GetEvents, 0, ZulipFault::RateLimited { retry_after: 0.01 });
//! server.on(Endpoint::SendMessage, 0, Moment::AfterHandling, server.human_reply("Agent Q #1 — x", "yes"));
//! // … point a client at server.server_url() with server.bot_email() / server.api_key() …
//! server.wait_for_count(Endpoint::DeleteQueue, 1, Duration::from_secs(5)).await?;
//! # Ok(())
//! # }
//! ```

mod auth;
mod fault;
mod messages;
mod queues;
mod realm;
mod record;
mod routes;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

pub use fault::{Action, Endpoint, Moment, ZulipFault};
pub use realm::{QueueInfo, StoredMessage, TopicMatch, ZulipUser};
pub use record::ZulipRequest;

use crate::serving::Serving;
use crate::wait::WaitTimeout;
use realm::Realm;
use record::Recorder;
use routes::Shared;

/// Options for [`FakeZulipServer`].
#[derive(Debug, Clone)]
pub struct FakeZulipServerBuilder {
    bot_email: String,
    api_key: String,
    stream: String,
    longpoll_timeout: Duration,
}

impl FakeZulipServerBuilder {
    /// The bot's email (default `tether-bot@zulip.example.com`).
    pub fn bot_email(mut self, email: impl Into<String>) -> Self {
        self.bot_email = email.into();
        self
    }

    /// The bot's API key (default `fake-zulip-api-key-0123456789`).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = key.into();
        self
    }

    /// The stream that exists (default `tether`).
    pub fn stream(mut self, stream: impl Into<String>) -> Self {
        self.stream = stream.into();
        self
    }

    /// How long `GET /events` blocks before answering with a heartbeat (Zulip: ~90 s; keep it
    /// short in tests).
    pub fn longpoll_timeout(mut self, timeout: Duration) -> Self {
        self.longpoll_timeout = timeout;
        self
    }

    /// Binds `127.0.0.1:0` and starts serving on the current tokio runtime.
    pub async fn start(self) -> std::io::Result<FakeZulipServer> {
        let (mut serving, listener) = Serving::bind().await?;
        let bot = ZulipUser {
            id: FakeZulipServer::BOT_ID,
            email: self.bot_email.clone(),
            full_name: "Tether Bot".into(),
        };
        let shared = Arc::new(Shared {
            realm: Mutex::new(Realm::new(bot, self.stream.clone())),
            changed: watch::Sender::new(0),
            longpoll: Mutex::new(self.longpoll_timeout),
            schedule: fault::Schedule::default(),
            recorder: Recorder::new(),
            expected_auth: auth::basic(&self.bot_email, &self.api_key),
            shutdown: serving.shutdown(),
        });
        serving.serve(listener, routes::router(Arc::clone(&shared)));
        Ok(FakeZulipServer {
            serving,
            options: self,
            shared,
        })
    }
}

/// A running fake Zulip server; stops when dropped.
pub struct FakeZulipServer {
    serving: Serving,
    options: FakeZulipServerBuilder,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeZulipServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeZulipServer")
            .field("addr", &self.serving.addr())
            .field("stream", &self.options.stream)
            .finish_non_exhaustive()
    }
}

impl FakeZulipServer {
    /// The bot's user id.
    pub const BOT_ID: u64 = 10;

    /// A server with the defaults (90 s long-poll).
    pub async fn start() -> std::io::Result<Self> {
        Self::builder().start().await
    }

    /// A server to configure before starting.
    pub fn builder() -> FakeZulipServerBuilder {
        FakeZulipServerBuilder {
            bot_email: "tether-bot@zulip.example.com".into(),
            api_key: "fake-zulip-api-key-0123456789".into(),
            stream: "tether".into(),
            longpoll_timeout: Duration::from_secs(90),
        }
    }

    /// The URL a client is configured with (`ZULIP_SERVER_URL`): `http://127.0.0.1:PORT`.
    pub fn server_url(&self) -> String {
        format!("http://{}", self.serving.addr())
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.serving.addr()
    }

    /// The bot's email.
    pub fn bot_email(&self) -> &str {
        &self.options.bot_email
    }

    /// The bot's API key.
    pub fn api_key(&self) -> &str {
        &self.options.api_key
    }

    /// The server's stream.
    pub fn stream(&self) -> &str {
        &self.options.stream
    }

    /// The bot user.
    pub fn bot(&self) -> ZulipUser {
        self.shared.realm().bot.clone()
    }

    /// Alice, a human (id 11).
    pub fn alice(&self) -> ZulipUser {
        ZulipUser {
            id: 11,
            email: "alice@example.com".into(),
            full_name: "Alice Human".into(),
        }
    }

    /// Bob, another human (id 12).
    pub fn bob(&self) -> ZulipUser {
        ZulipUser {
            id: 12,
            email: "bob@example.com".into(),
            full_name: "Bob Human".into(),
        }
    }

    /// `sender` posts `content` in `topic` of the server's stream; returns the message id.
    pub fn post(&self, sender: &ZulipUser, topic: &str, content: &str) -> u64 {
        let stream = self.options.stream.clone();
        self.post_in(sender, &stream, topic, content)
    }

    /// `sender` posts in `topic` of `stream` (created if needed).
    pub fn post_in(&self, sender: &ZulipUser, stream: &str, topic: &str, content: &str) -> u64 {
        let id = self.shared.realm().post(sender, stream, topic, content);
        self.shared.bump();
        id
    }

    /// Alice posts `content` in `topic`.
    pub fn post_as_human(&self, topic: &str, content: &str) -> u64 {
        self.post(&self.alice(), topic, content)
    }

    /// An [`Action`] in which Alice replies `content` in `topic`.
    pub fn human_reply(&self, topic: &str, content: &str) -> Action {
        Action::Post {
            sender: self.alice(),
            stream: None,
            topic: topic.into(),
            content: content.into(),
        }
    }

    /// Every message posted, oldest first.
    pub fn messages(&self) -> Vec<StoredMessage> {
        self.shared.realm().messages.clone()
    }

    /// The messages in exactly `topic` (case-insensitively, like Zulip) of the server's stream.
    pub fn messages_in(&self, topic: &str) -> Vec<StoredMessage> {
        let topic = topic.to_lowercase();
        self.messages()
            .into_iter()
            .filter(|m| {
                m.stream.eq_ignore_ascii_case(&self.options.stream)
                    && m.topic.to_lowercase() == topic
            })
            .collect()
    }

    /// The messages the bot posted.
    pub fn bot_messages(&self) -> Vec<StoredMessage> {
        self.messages()
            .into_iter()
            .filter(|m| m.sender.id == Self::BOT_ID)
            .collect()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ZulipRequest> {
        self.shared.recorder.requests()
    }

    /// Requests to `endpoint` so far.
    pub fn count(&self, endpoint: Endpoint) -> usize {
        self.shared.recorder.count(endpoint)
    }

    /// Requests so far, all endpoints (and unknown routes).
    pub fn total_requests(&self) -> usize {
        self.shared.recorder.total()
    }

    /// Waits until at least `n` requests to `endpoint` have arrived.
    pub async fn wait_for_count(
        &self,
        endpoint: Endpoint,
        n: usize,
        timeout: Duration,
    ) -> Result<(), WaitTimeout> {
        self.shared
            .recorder
            .wait_for_count(endpoint, n, timeout)
            .await
    }

    /// Waits until at least `n` messages are stored.
    pub async fn wait_for_messages(&self, n: usize, timeout: Duration) -> Result<(), WaitTimeout> {
        let mut changes = self.shared.changed.subscribe();
        let shared = Arc::clone(&self.shared);
        let reached = tokio::time::timeout(
            timeout,
            changes.wait_for(move |_| shared.realm().messages.len() >= n),
        )
        .await;
        match reached {
            Ok(Ok(_)) => Ok(()),
            _ => Err(WaitTimeout {
                what: format!("{n} message(s)"),
                timeout,
                seen: self.shared.realm().messages.len(),
            }),
        }
    }

    /// The queues that exist now.
    pub fn live_queues(&self) -> Vec<QueueInfo> {
        let realm = self.shared.realm();
        let mut queues: Vec<_> = realm
            .queues
            .iter()
            .map(|(id, q)| QueueInfo {
                id: id.clone(),
                stream: q.stream.clone(),
                topic: q.topic.clone(),
            })
            .collect();
        queues.sort_by(|a, b| a.id.cmp(&b.id));
        queues
    }

    /// The queues deleted by `DELETE /events`, in order.
    pub fn deleted_queues(&self) -> Vec<String> {
        self.shared.realm().deleted_queues.clone()
    }

    /// Every queue expires now: a waiting poll and the next ones get `BAD_EVENT_QUEUE_ID`.
    pub fn expire_queues(&self) {
        self.shared.apply(Action::ExpireQueues);
    }

    /// How topic narrows match from now on.
    pub fn set_topic_match(&self, topic_match: TopicMatch) {
        self.shared.realm().topic_match = topic_match;
    }

    /// The long-poll timeout for polls from now on.
    pub fn set_longpoll_timeout(&self, timeout: Duration) {
        *self
            .shared
            .longpoll
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = timeout;
    }

    /// The long-poll timeout.
    pub fn longpoll_timeout(&self) -> Duration {
        self.shared.longpoll()
    }

    /// Injects `fault` into request `nth` (0-based) to `endpoint`.
    pub fn fault_at(&self, endpoint: Endpoint, nth: usize, fault: ZulipFault) {
        self.shared.schedule.fault_at(endpoint, nth, fault);
    }

    /// Injects `fault` into each of the next `count` requests to `endpoint`.
    pub fn fault_next(&self, endpoint: Endpoint, count: usize, fault: ZulipFault) {
        self.shared.schedule.fault_next(endpoint, count, fault);
    }

    /// Runs `action` at request `nth` (0-based) to `endpoint`, at `moment`.
    pub fn on(&self, endpoint: Endpoint, nth: usize, moment: Moment, action: Action) {
        self.shared
            .schedule
            .action_at(endpoint, nth, moment, action);
    }
}
