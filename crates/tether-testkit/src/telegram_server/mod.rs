//! A fake Telegram Bot API: real HTTP on `127.0.0.1:0`, the methods a polling bot needs, the
//! documented reply shapes and errors, and faults on demand.
//!
//! tether's Telegram client is tested against this rather than against mocks, so the tests
//! exercise its real HTTP, the token in the path, long polling with a confirming offset, and its
//! recovery from every failure the Bot API has.
//!
//! Methods (`/bot<token>/<method>`, case-insensitive, parameters as query, JSON or form):
//! `getMe`, `getChat`, `deleteWebhook`, `sendMessage` (with `reply_parameters`,
//! `message_thread_id`, an inline keyboard), `getUpdates` (long poll; an `offset` confirms and
//! deletes every older update; a newer call ends the one still blocked with 409, as Telegram
//! does), `answerCallbackQuery`, `editMessageReplyMarkup` (`not modified` as Telegram says it)
//! and `createForumTopic` (in chats with topics; its service message is delivered, as the only
//! message of the bot's own that Telegram sends back). A wrong token is 401.
//!
//! The test side plays the humans: [`FakeTelegramServer::reply`] answers a message,
//! [`FakeTelegramServer::post`] writes in a chat or topic, [`FakeTelegramServer::press`] presses
//! an inline button, [`FakeTelegramServer::post_as_bot`] makes an update of the bot's own
//! message. Everything stays queued until a poller confirms it, so a reply posted while no one
//! polls is delivered to the next poller.
//!
//! Time-bound behaviour on demand: [`FakeTelegramServer::expire_presses`] drops unconfirmed
//! presses (their 150 s lifetime over), [`FakeTelegramServer::jump_update_ids`] makes update ids
//! jump.
//!
//! Faults ([`TelegramFault`]) are planned per method and per request index: 429 with
//! `retry_after`, 5xx, a connection reset before or after the request took effect, 409, 401, 403,
//! every update delivered twice. Requests are counted per [`Method`].
//!
//! The server's long-poll timeout is capped by [`FakeTelegramServerBuilder::longpoll_timeout`]
//! (Telegram: the `timeout` asked for, at most 50 s; keep it short in tests).

mod people;
mod routes;
mod state;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use state::{FakeChat, Press, StoredMessage, TelegramUser};

use crate::serving::Serving;
use crate::wait::WaitTimeout;
use state::World;

/// A Bot API method the fake implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    /// `getMe`.
    GetMe,
    /// `getChat`.
    GetChat,
    /// `deleteWebhook`.
    DeleteWebhook,
    /// `sendMessage`.
    SendMessage,
    /// `getUpdates`.
    GetUpdates,
    /// `answerCallbackQuery`.
    AnswerCallbackQuery,
    /// `editMessageReplyMarkup`.
    EditMessageReplyMarkup,
    /// `createForumTopic`.
    CreateForumTopic,
}

impl Method {
    fn parse(name: &str) -> Option<Method> {
        Some(match name.to_ascii_lowercase().as_str() {
            "getme" => Method::GetMe,
            "getchat" => Method::GetChat,
            "deletewebhook" => Method::DeleteWebhook,
            "sendmessage" => Method::SendMessage,
            "getupdates" => Method::GetUpdates,
            "answercallbackquery" => Method::AnswerCallbackQuery,
            "editmessagereplymarkup" => Method::EditMessageReplyMarkup,
            "createforumtopic" => Method::CreateForumTopic,
            _ => return None,
        })
    }
}

/// A fault the fake injects into one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TelegramFault {
    /// 429 `Too Many Requests: retry after N` with `parameters.retry_after` and `Retry-After`.
    RateLimited {
        /// Seconds to wait.
        retry_after: u64,
    },
    /// An HTTP 5xx with an error body.
    ServerError(u16),
    /// The connection drops before the request takes effect.
    ConnectionReset,
    /// The request takes effect (a message is sent), then the connection drops.
    ResetAfterHandling,
    /// 409: another `getUpdates` poller took over.
    Conflict,
    /// 401: the token was revoked.
    Unauthorized,
    /// 403: the bot was removed from the chat.
    Forbidden,
    /// `getUpdates` returns every update twice.
    DuplicateDelivery,
}

/// Options for [`FakeTelegramServer`].
#[derive(Debug, Clone)]
pub struct FakeTelegramServerBuilder {
    token: String,
    longpoll_timeout: Duration,
    chats: Vec<FakeChat>,
}

impl FakeTelegramServerBuilder {
    /// The bot token (default `FakeTelegramServer::TOKEN`).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = token.into();
        self
    }

    /// The most a `getUpdates` blocks (Telegram: its `timeout`; keep it short in tests).
    pub fn longpoll_timeout(mut self, timeout: Duration) -> Self {
        self.longpoll_timeout = timeout;
        self
    }

    /// Adds a chat the bot is in (default: a group [`FakeTelegramServer::GROUP`] and a forum
    /// [`FakeTelegramServer::FORUM`]).
    pub fn chat(mut self, chat: FakeChat) -> Self {
        self.chats.push(chat);
        self
    }

    /// Binds `127.0.0.1:0` and starts serving on the current tokio runtime.
    pub async fn start(self) -> std::io::Result<FakeTelegramServer> {
        let (mut serving, listener) = Serving::bind().await?;
        let bot_id = self
            .token
            .split(':')
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or(1);
        let bot = TelegramUser {
            id: bot_id,
            is_bot: true,
            first_name: "Tether".into(),
            username: Some("tether_bot".into()),
        };
        let shared = Arc::new(Shared {
            world: Mutex::new(World::new(bot, self.chats.clone())),
            changed: watch::Sender::new(0),
            longpoll: Mutex::new(self.longpoll_timeout),
            faults: Mutex::new(BTreeMap::new()),
            token: self.token.clone(),
            shutdown: serving.shutdown(),
        });
        serving.serve(listener, routes::router(Arc::clone(&shared)));
        Ok(FakeTelegramServer { serving, shared })
    }
}

pub(crate) struct Shared {
    world: Mutex<World>,
    changed: watch::Sender<u64>,
    longpoll: Mutex<Duration>,
    faults: Mutex<BTreeMap<(Method, usize), TelegramFault>>,
    token: String,
    shutdown: CancellationToken,
}

impl Shared {
    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Counts a request to `method`, returning how many came before it.
    fn count(&self, method: Method) -> usize {
        let mut w = self.world();
        let n = w.counts.entry(method).or_default();
        *n += 1;
        *n - 1
    }

    fn fault(&self, method: Method, index: usize) -> Option<TelegramFault> {
        self.faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(method, index))
    }
}

/// A running fake Bot API. Stops when dropped.
pub struct FakeTelegramServer {
    serving: Serving,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeTelegramServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeTelegramServer")
            .field("addr", &self.serving.addr())
            .finish_non_exhaustive()
    }
}

impl FakeTelegramServer {
    /// The default token (bot id 7001).
    pub const TOKEN: &'static str = "7001:AAFakeTelegramToken-0123456789abcdef";
    /// A group without topics (questions go as reply chains).
    pub const GROUP: i64 = -1001;
    /// A supergroup with forum topics.
    pub const FORUM: i64 = -1002;
    /// A chat the bot is in that tether is not configured for.
    pub const OTHER: i64 = -1003;

    /// Starts a server with the defaults.
    pub async fn start() -> std::io::Result<Self> {
        Self::builder().start().await
    }

    /// A builder with the default token, chats and a 50 s long-poll cap.
    pub fn builder() -> FakeTelegramServerBuilder {
        FakeTelegramServerBuilder {
            token: Self::TOKEN.into(),
            longpoll_timeout: Duration::from_secs(50),
            chats: vec![
                FakeChat {
                    id: Self::GROUP,
                    kind: "supergroup",
                    is_forum: false,
                },
                FakeChat {
                    id: Self::FORUM,
                    kind: "supergroup",
                    is_forum: true,
                },
                FakeChat {
                    id: Self::OTHER,
                    kind: "group",
                    is_forum: false,
                },
            ],
        }
    }

    /// The base URL (`http://127.0.0.1:port`), what `telegram.api_url` takes.
    pub fn api_url(&self) -> String {
        format!("http://{}", self.serving.addr())
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.serving.addr()
    }

    /// The bot token.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// Changes the long-poll cap from now on.
    pub fn set_longpoll_timeout(&self, timeout: Duration) {
        *self
            .shared
            .longpoll
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = timeout;
    }

    /// Plans `fault` for the request to `method` with index `index` (0 = the first).
    pub fn fault_at(&self, method: Method, index: usize, fault: TelegramFault) {
        self.shared
            .faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((method, index), fault);
    }

    /// Plans `fault` for the next request to `method`.
    pub fn fault_next(&self, method: Method, fault: TelegramFault) {
        let next = self.count(method);
        self.fault_at(method, next, fault);
    }

    /// Every message in `chat`, in order.
    pub fn messages(&self, chat: i64) -> Vec<StoredMessage> {
        let w = self.shared.world();
        w.messages
            .iter()
            .filter(|m| m.chat_id == chat)
            .cloned()
            .collect()
    }

    /// The bot's messages in `chat` with text (service messages left out), in order.
    pub fn bot_messages(&self, chat: i64) -> Vec<StoredMessage> {
        let bot = self.shared.world().bot.id;
        self.messages(chat)
            .into_iter()
            .filter(|m| m.from.id == bot && !m.text.is_empty())
            .collect()
    }

    /// The forum topics created: `(chat, message_thread_id, name)`.
    pub fn topics(&self) -> Vec<(i64, i64, String)> {
        self.shared.world().topics.clone()
    }

    /// Every button press and whether it was answered.
    pub fn presses(&self) -> Vec<Press> {
        self.shared.world().presses.clone()
    }

    /// Updates not confirmed yet.
    pub fn unconfirmed(&self) -> usize {
        self.shared.world().updates.len()
    }

    /// How many `getUpdates` were ended by a newer one (409).
    pub fn conflicts(&self) -> usize {
        self.shared.world().conflicts
    }

    /// Requests to `method` so far.
    pub fn count(&self, method: Method) -> usize {
        self.shared
            .world()
            .counts
            .get(&method)
            .copied()
            .unwrap_or_default()
    }

    /// Requests so far, every method.
    pub fn total_requests(&self) -> usize {
        self.shared.world().counts.values().sum()
    }

    /// Waits until `method` has had at least `n` requests.
    pub async fn wait_for_count(
        &self,
        method: Method,
        n: usize,
        timeout: Duration,
    ) -> Result<(), WaitTimeout> {
        let what = format!("{n} {method:?} requests");
        crate::wait::wait_until_async(&what, timeout, || (self.count(method) >= n).then_some(()))
            .await
    }
}
