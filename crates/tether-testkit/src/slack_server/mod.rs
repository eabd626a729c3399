//! A fake Slack: the Web API methods a Socket Mode bot needs on one loopback port and the
//! Socket Mode WebSocket on another, with the wire shapes Slack documents and faults on demand.
//!
//! tether's Slack client is tested against this rather than against mocks, so the tests
//! exercise its real HTTP (Bearer tokens, JSON and form bodies, `ok:false` errors, 429 with
//! `Retry-After`), its real WebSocket (tickets, `hello`, envelopes and acks, `disconnect`,
//! dropped sockets) and its recovery.
//!
//! Web API (`POST /api/<method>`): `auth.test`, `apps.connections.open` (app-level token; a
//! single-use ticket in a `ws://` URL), `chat.postMessage` (the bot's post is also delivered as
//! a `message` event with its `bot_id`, as Slack echoes it), `chat.update` (only the bot's own
//! messages), `conversations.replies` (parent first, `oldest`, `limit`, cursors),
//! `conversations.history` (newest first), `users.info` (the human is "Ada"). Every request is counted per [`SlackMethod`].
//!
//! The test side plays the humans: [`FakeSlackServer::reply`] posts in a thread,
//! [`FakeSlackServer::press_button`] presses a button of the bot's message,
//! [`FakeSlackServer::post_as_bot`] and [`FakeSlackServer::post_in`] make noise, and each event
//! goes to **one** open socket (round robin), or is dropped when none is open — as in Slack.
//!
//! Faults: [`FakeSlackServer::fault`] (429, 5xx, resets before or after the request took
//! effect, `ok:false` codes), [`FakeSlackServer::disconnect_all`] (a `disconnect` frame),
//! [`FakeSlackServer::drop_sockets`] (no close frame), [`FakeSlackServer::close_gate`] (new
//! sockets wait for `hello`, so replies meanwhile are dropped events),
//! [`FakeSlackServer::duplicate_deliveries`] and [`FakeSlackServer::set_page_limit`].

mod fault;
mod socket;
mod web;
mod workspace;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use fault::{SlackFault, SlackMethod};
pub use workspace::StoredMessage;

use crate::serving::Serving;
use crate::wait::{WaitTimeout, wait_until_async};
use socket::Sockets;
use workspace::{Draft, Workspace};

/// The fake workspace's id.
pub const TEAM_ID: &str = "T0FAKETEAM";
/// The bot's user id.
pub const BOT_USER: &str = "U0TETHERBOT";
/// The bot's id (on its messages).
pub const BOT_ID: &str = "B0TETHERBOT";

pub(crate) struct Shared {
    workspace: Mutex<Workspace>,
    sockets: Arc<Sockets>,
    faults: fault::Schedule,
    requests: Mutex<Vec<(SlackMethod, Instant)>>,
    page_limit: Mutex<Option<usize>>,
    bot_token: String,
    app_token: String,
    ws_addr: SocketAddr,
}

impl Shared {
    fn workspace(&self) -> MutexGuard<'_, Workspace> {
        self.workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, method: SlackMethod) {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((method, Instant::now()));
    }

    fn page_limit(&self, asked: usize) -> usize {
        let cap = *self
            .page_limit
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cap.map_or(asked, |cap| asked.min(cap)).max(1)
    }

    /// Delivers `message` as a `message` event.
    fn emit_message(&self, message: &StoredMessage) {
        let mut event = message.to_json();
        event["channel"] = json!(message.channel);
        event["event_ts"] = json!(message.ts);
        event["channel_type"] = json!("channel");
        if message
            .thread_ts
            .as_deref()
            .is_some_and(|t| t != message.ts)
        {
            event["parent_user_id"] = json!(BOT_USER);
        }
        self.emit_event(event);
    }

    fn emit_event(&self, event: Value) {
        let payload = json!({
            "token": "unused-verification-token",
            "team_id": TEAM_ID,
            "api_app_id": "A0FAKEAPP",
            "type": "event_callback",
            "event_id": format!("Ev{}", event["ts"].as_str().unwrap_or("0").replace('.', "")),
            "event_time": 1_700_000_000,
            "event": event,
        });
        self.sockets.deliver("events_api", payload);
    }
}

/// A running fake Slack; stops when dropped.
pub struct FakeSlackServer {
    serving: Serving,
    shared: Arc<Shared>,
}

impl FakeSlackServer {
    /// The channel questions go to.
    pub const CHANNEL: &'static str = "C0TETHER001";
    /// Another channel (noise).
    pub const OTHER_CHANNEL: &'static str = "C0OTHER0001";
    /// A human.
    pub const HUMAN: &'static str = "U0HUMAN0001";

    /// Binds two ports on `127.0.0.1` and serves on the current tokio runtime.
    pub async fn start() -> std::io::Result<FakeSlackServer> {
        let (mut serving, http) = Serving::bind().await?;
        let ws = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let sockets = Arc::new(Sockets::new(serving.shutdown()));
        let shared = Arc::new(Shared {
            workspace: Mutex::new(Workspace::new(vec![
                Self::CHANNEL.to_owned(),
                Self::OTHER_CHANNEL.to_owned(),
            ])),
            sockets: Arc::clone(&sockets),
            faults: fault::Schedule::default(),
            requests: Mutex::new(Vec::new()),
            page_limit: Mutex::new(None),
            bot_token: "xoxb-fake-bot-token-0123456789".into(),
            app_token: "xapp-fake-app-token-0123456789".into(),
            ws_addr: ws.local_addr()?,
        });
        serving.serve(http, web::router(Arc::clone(&shared)));
        serving.spawn(sockets.serve(ws));
        Ok(FakeSlackServer { serving, shared })
    }

    /// The Web API's base URL (`http://127.0.0.1:PORT/api`).
    pub fn api_url(&self) -> String {
        format!("http://{}/api", self.serving.addr())
    }

    /// The bot token the fake accepts.
    pub fn bot_token(&self) -> &str {
        &self.shared.bot_token
    }

    /// The app-level token the fake accepts.
    pub fn app_token(&self) -> &str {
        &self.shared.app_token
    }

    /// Plans `fault` for the next `count` requests of `method`.
    pub fn fault(&self, method: SlackMethod, count: usize, fault: SlackFault) {
        self.shared.faults.add(method, count, fault);
    }

    /// Caps every page of `conversations.replies`/`history` (e.g. 1-message pages).
    pub fn set_page_limit(&self, limit: Option<usize>) {
        *self
            .shared
            .page_limit
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = limit;
    }

    /// A human `user` posts `text` in `thread` of the channel; returns its ts.
    pub fn reply(&self, thread: &str, user: &str, text: &str) -> String {
        self.post_in(Self::CHANNEL, Some(thread), user, text)
    }

    /// A human `user` posts `text` in `channel` (in `thread`, or at the top level); returns
    /// its ts.
    pub fn post_in(&self, channel: &str, thread: Option<&str>, user: &str, text: &str) -> String {
        let text = escape(text);
        let stored = self.shared.workspace().post(Draft {
            channel,
            user,
            bot_id: None,
            text: &text,
            thread_ts: thread,
            blocks: Value::Null,
            metadata: None,
        });
        self.shared.emit_message(&stored);
        stored.ts
    }

    /// The bot posts `text` in `thread` (as another tether process, or an echo).
    pub fn post_as_bot(&self, thread: &str, text: &str) -> String {
        let stored = self.shared.workspace().post(Draft {
            channel: Self::CHANNEL,
            user: BOT_USER,
            bot_id: Some(BOT_ID),
            text,
            thread_ts: Some(thread),
            blocks: Value::Null,
            metadata: None,
        });
        self.shared.emit_message(&stored);
        stored.ts
    }

    /// `user` edits their message `ts`: a hidden `message_changed` event.
    pub fn edit(&self, ts: &str, user: &str, text: &str) {
        let edited = {
            let mut ws = self.shared.workspace();
            let Some(message) = ws.find_mut(Self::CHANNEL, ts) else {
                return;
            };
            message.text = escape(text);
            message.clone()
        };
        self.shared.emit_event(json!({
            "type": "message", "subtype": "message_changed", "hidden": true,
            "channel": Self::CHANNEL, "ts": edited.ts, "event_ts": edited.ts,
            "message": edited.to_json(), "user": user,
        }));
    }

    /// `user` presses the button `action_id` (see the client's option ids) of the bot's message
    /// `message_ts`: a `block_actions` interactive envelope.
    pub fn press_button(&self, message_ts: &str, user: &str, action_id: &str) {
        let message = {
            let ws = self.shared.workspace();
            ws.messages
                .iter()
                .find(|m| m.channel == Self::CHANNEL && m.ts == message_ts)
                .cloned()
        };
        let Some(message) = message else {
            return;
        };
        let value = button_value(&message.blocks, action_id).unwrap_or_default();
        let mut container = json!({"type": "message", "message_ts": message.ts,
            "channel_id": Self::CHANNEL, "is_ephemeral": false});
        if let Some(thread) = message.thread_ts.as_deref().filter(|t| *t != message.ts) {
            container["thread_ts"] = json!(thread);
        }
        let payload = json!({
            "type": "block_actions",
            "user": {"id": user, "username": "ada", "name": "ada", "team_id": TEAM_ID},
            "api_app_id": "A0FAKEAPP",
            "container": container,
            "trigger_id": "1.2.3",
            "team": {"id": TEAM_ID, "domain": "fake"},
            "channel": {"id": Self::CHANNEL, "name": "tether"},
            "message": message.to_json(),
            "response_url": format!("http://{}/response/unused", self.serving.addr()),
            "actions": [{"type": "button", "action_id": action_id, "block_id": "tether_options",
                "value": value, "action_ts": "1700000000.000001"}],
        });
        self.shared.sockets.deliver("interactive", payload);
    }

    /// Sends `disconnect` (`refresh_requested`, `warning`, `too_many_websockets`, …) on every
    /// socket, then closes them.
    pub fn disconnect_all(&self, reason: &str) {
        self.shared.sockets.disconnect_all(reason);
    }

    /// Drops every socket without a close frame (a reset, a half-dead network).
    pub fn drop_sockets(&self) {
        self.shared.sockets.drop_all();
    }

    /// Every socket goes silent without closing (half-open): no pongs, no events.
    pub fn freeze_sockets(&self) {
        self.shared.sockets.freeze_all();
    }

    /// New sockets get no `hello` until [`FakeSlackServer::open_gate`].
    pub fn close_gate(&self) {
        self.shared.sockets.gate.send_replace(false);
    }

    /// Lets waiting sockets say `hello`.
    pub fn open_gate(&self) {
        self.shared.sockets.gate.send_replace(true);
    }

    /// Sends every envelope twice (the second a retry, to the next socket).
    pub fn duplicate_deliveries(&self, on: bool) {
        self.shared.sockets.duplicate.store(on, Ordering::Relaxed);
    }

    /// Sockets open (past `hello`) now.
    pub fn open_sockets(&self) -> usize {
        self.shared.sockets.open()
    }

    /// `hello`s sent so far.
    pub fn hellos(&self) -> u64 {
        self.shared.sockets.hellos.load(Ordering::Relaxed)
    }

    /// Events dropped because no socket was open.
    pub fn dropped_events(&self) -> u64 {
        self.shared.sockets.dropped.load(Ordering::Relaxed)
    }

    /// Envelope ids the client acknowledged.
    pub fn acks(&self) -> Vec<String> {
        self.shared.sockets.acks()
    }

    /// Waits until `n` sockets are open.
    pub async fn wait_for_sockets(&self, n: usize, timeout: Duration) -> Result<(), WaitTimeout> {
        wait_until_async(&format!("{n} open slack sockets"), timeout, || {
            (self.open_sockets() >= n).then_some(())
        })
        .await
    }

    /// Requests to `method` so far.
    pub fn requests(&self, method: SlackMethod) -> usize {
        self.requests_since(method, None)
    }

    /// Requests to `method` since `at` (all when `None`).
    pub fn requests_since(&self, method: SlackMethod, at: Option<Instant>) -> usize {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(m, t)| *m == method && at.is_none_or(|at| *t >= at))
            .count()
    }

    /// Requests of any method since `at`.
    pub fn all_requests_since(&self, at: Instant) -> usize {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, t)| *t >= at)
            .count()
    }

    /// Every message, oldest first.
    pub fn messages(&self) -> Vec<StoredMessage> {
        self.shared.workspace().messages.clone()
    }

    /// The bot's messages that carry blocks (its questions), oldest first.
    pub fn questions(&self) -> Vec<StoredMessage> {
        self.messages()
            .into_iter()
            .filter(|m| m.bot_id.is_some() && !m.blocks.is_null())
            .collect()
    }

    /// The bot's plain messages in `thread` (notes), oldest first.
    pub fn notes_in(&self, thread: &str) -> Vec<StoredMessage> {
        self.messages()
            .into_iter()
            .filter(|m| {
                m.bot_id.is_some() && m.blocks.is_null() && m.thread_ts.as_deref() == Some(thread)
            })
            .collect()
    }

    /// Waits until the bot has posted `n` questions; returns them.
    pub async fn wait_for_questions(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<StoredMessage>, WaitTimeout> {
        wait_until_async(&format!("{n} slack questions"), timeout, || {
            (self.questions().len() >= n).then_some(())
        })
        .await?;
        Ok(self.questions())
    }
}

/// What Slack does to `&`, `<`, `>` in a message's text.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn button_value(blocks: &Value, action_id: &str) -> Option<String> {
    blocks
        .as_array()?
        .iter()
        .filter_map(|b| b.get("elements")?.as_array())
        .flatten()
        .find(|e| e.get("action_id").and_then(Value::as_str) == Some(action_id))?
        .get("value")?
        .as_str()
        .map(str::to_owned)
}
