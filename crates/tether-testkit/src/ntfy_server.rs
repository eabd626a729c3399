//! A fake ntfy server: real HTTP on `127.0.0.1:0`, the parts of ntfy's documented API a
//! publisher and a subscriber use, and faults on demand.
//!
//! tether's ntfy client and sink are tested against this rather than mocks, so the tests run
//! their real HTTP: the JSON publish, the token header, the NDJSON stream, `since=`.
//!
//! - `POST /` (or `PUT /`) with a JSON body `{"topic", "message", "title", "priority", "tags",
//!   "actions"}` publishes; `POST`/`PUT /<topic>` publishes the raw body as the message (what a
//!   phone's `http` action button does). Both answer with the message as JSON (`id`, `time`,
//!   `event: "message"`, `topic`, …). Topics are 1–64 of `[A-Za-z0-9_-]`, else 400.
//! - `GET /<topic>/json` streams one JSON event per line: `open`, then the cached messages
//!   `since=` asks for (a message id: those after it; a Unix time: those from it on; `all`;
//!   none without `since`), then each new message as it is published, and a `keepalive` every
//!   [`FakeNtfyServerBuilder::keepalive`]. With `poll=1` it sends the cached messages and ends.
//! - With [`FakeNtfyServerBuilder::token`], every request needs `Authorization: Bearer <token>`
//!   (401 without, 403 with another).
//!
//! The test plays the phone: [`FakeNtfyServer::press`] sends an `http` action's request over a
//! plain TCP connection, as the app would. Faults: [`FakeNtfyServer::fail_next`] answers the
//! next requests to a route with 429 (and `Retry-After`) or a 5xx; [`FakeNtfyServer::drop_streams`]
//! ends every open stream mid-way; [`FakeNtfyServer::hold_subscriptions`] keeps new stream
//! requests waiting (a network cut) until [`FakeNtfyServer::release_subscriptions`];
//! [`FakeNtfyServer::resend`] sends a message again on the open streams (a duplicate id).

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::serving::Serving;

/// A route a fault is planned for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NtfyRoute {
    /// Publishing (`POST /`, `POST /<topic>`).
    Publish,
    /// Subscribing (`GET /<topic>/json`).
    Subscribe,
}

/// A planned failure of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NtfyFault {
    /// 429 with `Retry-After: <secs>` (as ntfy's rate limiter, which a proxy may time).
    RateLimited {
        /// The `Retry-After` seconds.
        retry_after: u64,
    },
    /// This 5xx status.
    ServerError(u16),
}

/// One stream request, as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The topic.
    pub topic: String,
    /// Its `since`, if given.
    pub since: Option<String>,
}

/// A message as stored.
#[derive(Debug, Clone)]
struct Stored {
    /// Its JSON (the event as a subscriber gets it).
    json: Value,
    topic: String,
    id: String,
    time: u64,
}

#[derive(Default)]
struct World {
    messages: Vec<Stored>,
    streams: Vec<(String, mpsc::UnboundedSender<String>)>,
    subscriptions: Vec<Subscription>,
    faults: Vec<(NtfyRoute, NtfyFault)>,
    authorizations: Vec<Option<String>>,
    rate_limited: usize,
}

struct Shared {
    world: Mutex<World>,
    tokens: Vec<String>,
    keepalive: Duration,
    next_id: AtomicU64,
    /// Cancelled to end every open stream; replaced by a fresh one.
    streams_end: Mutex<CancellationToken>,
    held: watch::Sender<bool>,
    waiting: AtomicU64,
    keepalives: AtomicU64,
    changed: watch::Sender<u64>,
}

impl Shared {
    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fault(&self, route: NtfyRoute) -> Option<NtfyFault> {
        let mut w = self.world();
        let at = w.faults.iter().position(|(r, _)| *r == route)?;
        let (_, fault) = w.faults.remove(at);
        if matches!(fault, NtfyFault::RateLimited { .. }) {
            w.rate_limited += 1;
        }
        Some(fault)
    }

    /// The refusal, when the request lacks the token.
    fn refuse(&self, headers: &HeaderMap) -> Option<Response> {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        self.world().authorizations.push(given.clone());
        if self.tokens.is_empty() {
            return None;
        }
        match given {
            None => Some(error(StatusCode::UNAUTHORIZED, 40101, "unauthorized")),
            Some(g) if self.tokens.iter().any(|t| g == format!("Bearer {t}")) => None,
            Some(_) => Some(error(StatusCode::FORBIDDEN, 40301, "forbidden")),
        }
    }

    /// Stores a message and sends it to the topic's open streams.
    fn publish(&self, topic: &str, fields: &Value) -> Value {
        let n = self.next_id.fetch_add(1, Ordering::SeqCst);
        let id = format!("m{n:04}{:07x}", n.wrapping_mul(0x9E37_79B9) & 0xFFF_FFFF);
        let time = now();
        let mut event = json!({"id": id, "time": time, "expires": time + 43_200,
                               "event": "message", "topic": topic});
        for key in ["title", "message", "priority", "tags", "actions", "click"] {
            if let Some(v) = fields.get(key).filter(|v| !v.is_null()) {
                event[key] = v.clone();
            }
        }
        if event.get("message").is_none() {
            event["message"] = json!("triggered");
        }
        let mut w = self.world();
        w.messages.push(Stored {
            json: event.clone(),
            topic: topic.to_owned(),
            id,
            time,
        });
        let line = event.to_string();
        w.streams
            .retain(|(t, tx)| t != topic || tx.send(line.clone()).is_ok());
        drop(w);
        self.changed.send_modify(|n| *n += 1);
        event
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn error(status: StatusCode, code: u32, text: &str) -> Response {
    let body = json!({"code": code, "http": status.as_u16(), "error": text});
    (status, axum::Json(body)).into_response()
}

fn fault_response(fault: NtfyFault) -> Response {
    match fault {
        NtfyFault::RateLimited { retry_after } => {
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                42901,
                "limit reached: too many requests",
            );
            if let Ok(v) = retry_after.to_string().parse() {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        }
        NtfyFault::ServerError(status) => error(
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            50001,
            "internal server error",
        ),
    }
}

fn valid_topic(topic: &str) -> bool {
    !topic.is_empty()
        && topic.len() <= 64
        && topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What a publish gets before its body is read, if anything: a refusal (no valid token), or the
/// fault a test scheduled.
fn turned_away(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    shared
        .refuse(headers)
        .or_else(|| shared.fault(NtfyRoute::Publish).map(fault_response))
}

async fn publish_json(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(r) = turned_away(&shared, &headers) {
        return r;
    }
    let Ok(fields) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            40017,
            "invalid request: body must be JSON",
        );
    };
    let topic = fields
        .get("topic")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !valid_topic(topic) {
        return error(StatusCode::BAD_REQUEST, 40009, "invalid topic");
    }
    if let Some(p) = fields.get("priority")
        && !p.as_u64().is_some_and(|p| (1..=5).contains(&p))
    {
        return error(StatusCode::BAD_REQUEST, 40007, "invalid priority");
    }
    if fields
        .get("actions")
        .and_then(Value::as_array)
        .is_some_and(|a| a.len() > 3)
    {
        return error(StatusCode::BAD_REQUEST, 40018, "too many actions (max 3)");
    }
    let topic = topic.to_owned();
    axum::Json(shared.publish(&topic, &fields)).into_response()
}

async fn publish_raw(
    State(shared): State<Arc<Shared>>,
    Path(topic): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(r) = turned_away(&shared, &headers) {
        return r;
    }
    if !valid_topic(&topic) {
        return error(StatusCode::BAD_REQUEST, 40009, "invalid topic");
    }
    let title = headers
        .get("title")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let fields = json!({"message": String::from_utf8_lossy(&body), "title": title});
    axum::Json(shared.publish(&topic, &fields)).into_response()
}

#[derive(serde::Deserialize)]
struct StreamQuery {
    since: Option<String>,
    poll: Option<String>,
}

async fn subscribe(
    State(shared): State<Arc<Shared>>,
    Path(topic): Path<String>,
    Query(query): Query<StreamQuery>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = shared.refuse(&headers) {
        return r;
    }
    if !valid_topic(&topic) {
        return error(StatusCode::BAD_REQUEST, 40009, "invalid topic");
    }
    {
        let mut held = shared.held.subscribe();
        shared.waiting.fetch_add(1, Ordering::SeqCst);
        shared.changed.send_modify(|n| *n += 1);
        let _ = held.wait_for(|h| !*h).await;
        shared.waiting.fetch_sub(1, Ordering::SeqCst);
    }
    shared.world().subscriptions.push(Subscription {
        topic: topic.clone(),
        since: query.since.clone(),
    });
    shared.changed.send_modify(|n| *n += 1);
    if let Some(fault) = shared.fault(NtfyRoute::Subscribe) {
        return fault_response(fault);
    }
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let open = json!({"id": format!("o{}", now()), "time": now(), "event": "open",
                      "topic": topic});
    let _ = tx.send(open.to_string());
    {
        let mut w = shared.world();
        let cached: Vec<&Stored> = w.messages.iter().filter(|m| m.topic == topic).collect();
        let from = match query.since.as_deref() {
            None => cached.len(),
            Some("all") => 0,
            Some(since) => match since.parse::<u64>() {
                Ok(t) => cached
                    .iter()
                    .position(|m| m.time >= t)
                    .unwrap_or(cached.len()),
                Err(_) => cached
                    .iter()
                    .position(|m| m.id == since)
                    .map_or(0, |i| i + 1),
            },
        };
        for m in &cached[from..] {
            let _ = tx.send(m.json.to_string());
        }
        let poll = matches!(query.poll.as_deref(), Some("1" | "true" | "yes"));
        if !poll {
            w.streams.push((topic.clone(), tx));
        }
    }
    let poll = matches!(query.poll.as_deref(), Some("1" | "true" | "yes"));
    let end = shared
        .streams_end
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let keepalive = shared.keepalive;
    let lines = StreamState {
        shared: Arc::clone(&shared),
        rx,
        end,
        keepalive,
        topic,
        poll,
        done: false,
    };
    let body = futures_util::stream::unfold(lines, |mut s| async move {
        if s.done {
            return None;
        }
        let line = if s.poll {
            match s.rx.try_recv() {
                Ok(line) => line,
                Err(_) => return None,
            }
        } else {
            tokio::select! {
                () = s.end.cancelled() => return None,
                line = s.rx.recv() => line?,
                () = tokio::time::sleep(s.keepalive) => {
                    s.shared.keepalives.fetch_add(1, Ordering::SeqCst);
                    s.shared.changed.send_modify(|n| *n += 1);
                    json!({"id": format!("k{}", now()), "time": now(), "event": "keepalive",
                           "topic": s.topic}).to_string()
                }
            }
        };
        if s.end.is_cancelled() {
            s.done = true;
        }
        Some((Ok::<_, Infallible>(Bytes::from(format!("{line}\n"))), s))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

struct StreamState {
    shared: Arc<Shared>,
    rx: mpsc::UnboundedReceiver<String>,
    end: CancellationToken,
    keepalive: Duration,
    topic: String,
    poll: bool,
    done: bool,
}

/// Builds a [`FakeNtfyServer`].
#[derive(Debug, Clone)]
pub struct FakeNtfyServerBuilder {
    tokens: Vec<String>,
    keepalive: Duration,
}

impl FakeNtfyServerBuilder {
    /// Requires `Authorization: Bearer <token>` on every request (called again, any of the
    /// tokens given is accepted).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.tokens.push(token.into());
        self
    }

    /// How often an idle stream gets a `keepalive` event (ntfy: 45 s).
    pub fn keepalive(mut self, every: Duration) -> Self {
        self.keepalive = every;
        self
    }

    /// Binds `127.0.0.1:0` and serves until the server is dropped.
    pub async fn start(self) -> std::io::Result<FakeNtfyServer> {
        // Like every fake here it sends at once (TCP_NODELAY), as ntfy's Go sockets do: a
        // stream's small lines are not held back waiting for the reader's acknowledgement.
        let (mut serving, listener) = Serving::bind().await?;
        let shared = Arc::new(Shared {
            world: Mutex::default(),
            tokens: self.tokens,
            keepalive: self.keepalive,
            next_id: AtomicU64::new(1),
            streams_end: Mutex::new(CancellationToken::new()),
            held: watch::Sender::new(false),
            waiting: AtomicU64::new(0),
            keepalives: AtomicU64::new(0),
            changed: watch::Sender::new(0),
        });
        let app = Router::new()
            .route("/", post(publish_json).put(publish_json))
            .route("/{topic}", post(publish_raw).put(publish_raw))
            .route("/{topic}/json", get(subscribe))
            .with_state(Arc::clone(&shared));
        serving.serve(listener, app);
        Ok(FakeNtfyServer { serving, shared })
    }
}

/// A running fake ntfy server.
pub struct FakeNtfyServer {
    serving: Serving,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeNtfyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeNtfyServer")
            .field("addr", &self.serving.addr())
            .finish_non_exhaustive()
    }
}

impl Drop for FakeNtfyServer {
    fn drop(&mut self) {
        // Its streams end first; dropping `serving` then stops the server.
        self.streams_end();
    }
}

impl FakeNtfyServer {
    /// A builder: no token, a keepalive every 45 s.
    pub fn builder() -> FakeNtfyServerBuilder {
        FakeNtfyServerBuilder {
            tokens: Vec::new(),
            keepalive: Duration::from_secs(45),
        }
    }

    /// A server with the defaults.
    pub async fn start() -> std::io::Result<Self> {
        Self::builder().start().await
    }

    /// The base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.serving.addr())
    }

    /// The messages of `topic` as a subscriber gets them (JSON), oldest first.
    pub fn messages(&self, topic: &str) -> Vec<Value> {
        self.shared
            .world()
            .messages
            .iter()
            .filter(|m| m.topic == topic)
            .map(|m| m.json.clone())
            .collect()
    }

    /// Every stream request so far, in order.
    pub fn subscriptions(&self) -> Vec<Subscription> {
        self.shared.world().subscriptions.clone()
    }

    /// The `Authorization` header of every request so far (`None` where there was none).
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.shared.world().authorizations.clone()
    }

    /// How many requests were answered with a planned 429.
    pub fn rate_limited(&self) -> usize {
        self.shared.world().rate_limited
    }

    /// How many streams are open now.
    pub fn open_streams(&self) -> usize {
        let mut w = self.shared.world();
        w.streams.retain(|(_, tx)| !tx.is_closed());
        w.streams.len()
    }

    /// How many `keepalive` events were sent.
    pub fn keepalives(&self) -> u64 {
        self.shared.keepalives.load(Ordering::SeqCst)
    }

    /// How many stream requests are being held.
    pub fn held_subscriptions(&self) -> u64 {
        self.shared.waiting.load(Ordering::SeqCst)
    }

    /// Answers the next request to `route` with `fault` (planned faults queue in order).
    pub fn fail_next(&self, route: NtfyRoute, fault: NtfyFault) {
        self.shared.world().faults.push((route, fault));
    }

    /// Ends every open stream now, as a dropped connection would.
    pub fn drop_streams(&self) {
        self.streams_end();
        self.shared.world().streams.clear();
    }

    fn streams_end(&self) {
        let mut end = self
            .shared
            .streams_end
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        end.cancel();
        *end = CancellationToken::new();
    }

    /// Keeps new stream requests waiting until [`FakeNtfyServer::release_subscriptions`].
    pub fn hold_subscriptions(&self) {
        self.shared.held.send_replace(true);
    }

    /// Lets held and new stream requests through.
    pub fn release_subscriptions(&self) {
        self.shared.held.send_replace(false);
    }

    /// Publishes `message` to `topic` as another publisher would.
    pub fn publish(&self, topic: &str, message: &str) -> Value {
        self.shared.publish(topic, &json!({"message": message}))
    }

    /// Sends the stored message `id` again on the open streams of its topic (a duplicate).
    pub fn resend(&self, id: &str) -> bool {
        let mut w = self.shared.world();
        let Some(m) = w.messages.iter().find(|m| m.id == id).cloned() else {
            return false;
        };
        let line = m.json.to_string();
        w.streams
            .retain(|(t, tx)| *t != m.topic || tx.send(line.clone()).is_ok());
        true
    }

    /// Does what the phone does when a button is pressed: sends the `http` action's request
    /// (`method`, `url`, `headers`, `body`) over a fresh TCP connection. Returns the status.
    pub async fn press(&self, action: &Value) -> std::io::Result<u16> {
        let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
        let url = action
            .get("url")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("the action has no url"))?;
        let method = action
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("POST");
        let body = action.get("body").and_then(Value::as_str).unwrap_or("");
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| invalid("not an http:// url"))?;
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let mut request = format!(
            "{method} /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\
             Connection: close\r\n",
            body.len()
        );
        if let Some(headers) = action.get("headers").and_then(Value::as_object) {
            for (k, v) in headers {
                request.push_str(&format!("{k}: {}\r\n", v.as_str().unwrap_or_default()));
            }
        }
        request.push_str("\r\n");
        request.push_str(body);
        let mut stream = tokio::net::TcpStream::connect(host).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await?;
        let head = String::from_utf8_lossy(&reply);
        head.split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid("no status in the reply"))
    }

    /// Waits until `cond` holds for the server's state, checking after every change, for at
    /// most `limit`.
    pub async fn wait_for(
        &self,
        what: &str,
        limit: Duration,
        cond: impl Fn(&FakeNtfyServer) -> bool,
    ) -> Result<(), crate::WaitTimeout> {
        let mut changed = self.shared.changed.subscribe();
        let wait = async {
            loop {
                if cond(self) {
                    return;
                }
                tokio::select! {
                    _ = changed.changed() => {}
                    () = tokio::time::sleep(crate::wait::POLL) => {}
                }
            }
        };
        tokio::time::timeout(limit, wait)
            .await
            .map_err(|_| crate::WaitTimeout {
                what: what.to_owned(),
                timeout: limit,
                seen: 0,
            })
    }
}
