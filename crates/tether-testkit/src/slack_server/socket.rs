//! The fake's Socket Mode side: a WebSocket listener on its own loopback port (as Slack serves
//! sockets from other hosts than the Web API), single-use tickets from `apps.connections.open`,
//! `hello` once the gate is open, envelopes with ids that the client must acknowledge, and —
//! like Slack — each event to only **one** of the app's open sockets (round robin), or to none
//! (dropped and counted) when no socket is open.
//!
//! On demand: a `disconnect` frame on every socket, every socket dropped without a close frame
//! (a reset mid-wait), a closed gate (new sockets get no `hello` until it opens: "Slack is down
//! while the human replies"), and duplicate delivery (each envelope sent again, as a retry with
//! `retry_attempt: 1`, to the next socket). Like Slack, an event left unacknowledged on a socket
//! that closes is retried at once on another open socket (clicks are never retried).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_util::sync::CancellationToken;

enum Out {
    Frame(String),
    Disconnect(String),
    Drop,
    Freeze,
}

struct Conn {
    id: u64,
    tx: mpsc::UnboundedSender<Out>,
    /// Envelopes sent and not acknowledged: id → (type, payload, attempt).
    unacked: HashMap<String, (String, Value, u64)>,
}

/// The open sockets and what happened on them.
pub(crate) struct Sockets {
    conns: Mutex<Vec<Conn>>,
    next_id: AtomicU64,
    next_envelope: AtomicU64,
    round_robin: AtomicUsize,
    tickets: Mutex<HashSet<String>>,
    pub(crate) gate: watch::Sender<bool>,
    pub(crate) duplicate: AtomicBool,
    pub(crate) delivered: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) hellos: AtomicU64,
    acks: Mutex<Vec<String>>,
    shutdown: CancellationToken,
}

impl Sockets {
    pub(crate) fn new(shutdown: CancellationToken) -> Self {
        Sockets {
            conns: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            next_envelope: AtomicU64::new(1),
            round_robin: AtomicUsize::new(0),
            tickets: Mutex::new(HashSet::new()),
            gate: watch::Sender::new(true),
            duplicate: AtomicBool::new(false),
            delivered: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            hellos: AtomicU64::new(0),
            acks: Mutex::new(Vec::new()),
            shutdown,
        }
    }

    fn conns(&self) -> MutexGuard<'_, Vec<Conn>> {
        self.conns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn issue_ticket(&self) -> String {
        let ticket = format!("{:016x}", fastrand_u64());
        self.tickets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(ticket.clone());
        ticket
    }

    pub(crate) fn open(&self) -> usize {
        self.conns().len()
    }

    pub(crate) fn acks(&self) -> Vec<String> {
        self.acks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sends one envelope of `kind` carrying `payload` to one open socket.
    pub(crate) fn deliver(&self, kind: &str, payload: Value) {
        self.deliver_attempt(kind, payload, 0);
    }

    fn deliver_attempt(&self, kind: &str, payload: Value, first: u64) {
        let mut conns = self.conns();
        if conns.is_empty() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let attempts = if self.duplicate.load(Ordering::Relaxed) {
            2
        } else {
            1
        };
        for attempt in first..first + attempts {
            let n = self.round_robin.fetch_add(1, Ordering::Relaxed);
            let len = conns.len();
            let conn = &mut conns[n % len];
            let id = self.next_envelope.fetch_add(1, Ordering::Relaxed);
            let mut envelope = json!({
                "envelope_id": format!("env-{id:08}"),
                "type": kind,
                "accepts_response_payload": false,
                "payload": payload,
            });
            if kind == "events_api" {
                envelope["retry_attempt"] = json!(attempt);
                envelope["retry_reason"] = json!(if attempt == 0 { "" } else { "timeout" });
            }
            if conn.tx.send(Out::Frame(envelope.to_string())).is_ok() {
                self.delivered.fetch_add(1, Ordering::Relaxed);
                conn.unacked.insert(
                    format!("env-{id:08}"),
                    (kind.to_owned(), payload.clone(), attempt),
                );
            }
        }
    }

    /// Sends `disconnect` with `reason` on every socket, then closes them.
    pub(crate) fn disconnect_all(&self, reason: &str) {
        let gone: Vec<Conn> = self.conns().drain(..).collect();
        for conn in &gone {
            let _ = conn.tx.send(Out::Disconnect(reason.to_owned()));
        }
        self.retry(gone);
    }

    /// Drops every socket without a close frame.
    pub(crate) fn drop_all(&self) {
        let gone: Vec<Conn> = self.conns().drain(..).collect();
        for conn in &gone {
            let _ = conn.tx.send(Out::Drop);
        }
        self.retry(gone);
    }

    /// Every socket stops reading and writing but stays open (half-open: no pongs, no events).
    pub(crate) fn freeze_all(&self) {
        let gone: Vec<Conn> = self.conns().drain(..).collect();
        for conn in &gone {
            let _ = conn.tx.send(Out::Freeze);
        }
        self.retry(gone);
    }

    /// Forgets socket `id`; its unacknowledged events are retried at once on another socket
    /// (Slack retries events, at once, then after about 1 and 5 minutes; clicks never).
    fn remove(&self, id: u64) {
        let gone: Vec<Conn> = {
            let mut conns = self.conns();
            let (gone, kept) = conns.drain(..).partition(|c| c.id == id);
            *conns = kept;
            gone
        };
        self.retry(gone);
    }

    fn retry(&self, gone: Vec<Conn>) {
        for conn in gone {
            for (kind, payload, attempt) in conn.unacked.into_values() {
                if kind == "events_api" && attempt < 3 {
                    self.deliver_attempt(&kind, payload, attempt + 1);
                }
            }
        }
    }

    /// Accepts sockets until shutdown.
    pub(crate) async fn serve(self: Arc<Self>, listener: TcpListener) {
        loop {
            let accepted = tokio::select! {
                () = self.shutdown.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            if let Ok((tcp, _)) = accepted {
                // Events go out at once, as Slack's do (no 40 ms held back by Nagle).
                let _ = tcp.set_nodelay(true);
                let sockets = Arc::clone(&self);
                tokio::spawn(async move { sockets.connection(tcp).await });
            }
        }
    }

    async fn connection(self: Arc<Self>, tcp: TcpStream) {
        let tickets = &self.tickets;
        #[allow(
            clippy::result_large_err,
            reason = "the handshake callback's signature is tungstenite's"
        )]
        let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
            let ticket = request
                .uri()
                .query()
                .unwrap_or("")
                .split('&')
                .find_map(|pair| pair.strip_prefix("ticket="))
                .unwrap_or("");
            let known = tickets
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(ticket);
            if known {
                Ok(response)
            } else {
                let mut refused = ErrorResponse::new(Some("invalid ticket".into()));
                *refused.status_mut() = StatusCode::UNAUTHORIZED;
                Err(refused)
            }
        };
        let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, check).await else {
            return;
        };
        let mut gate = self.gate.subscribe();
        tokio::select! {
            () = self.shutdown.cancelled() => return,
            open = gate.wait_for(|open| *open) => if open.is_err() { return },
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let hello = {
            let mut conns = self.conns();
            conns.push(Conn {
                id,
                tx,
                unacked: HashMap::new(),
            });
            json!({"type": "hello", "num_connections": conns.len(),
                "debug_info": {"host": "applink-fake", "approximate_connection_time": 18060},
                "connection_info": {"app_id": "A0FAKEAPP"}})
        };
        self.hellos.fetch_add(1, Ordering::Relaxed);
        if ws
            .send(WsMessage::Text(hello.to_string().into()))
            .await
            .is_err()
        {
            self.remove(id);
            return;
        }
        loop {
            tokio::select! {
                () = self.shutdown.cancelled() => break,
                out = rx.recv() => match out {
                    Some(Out::Frame(text)) => {
                        if ws.send(WsMessage::Text(text.into())).await.is_err() { break; }
                    }
                    Some(Out::Disconnect(reason)) => {
                        let frame = json!({"type": "disconnect", "reason": reason,
                            "debug_info": {"host": "applink-fake"}});
                        let _ = ws.send(WsMessage::Text(frame.to_string().into())).await;
                        let _ = ws.close(None).await;
                        break;
                    }
                    Some(Out::Drop) | None => break,
                    Some(Out::Freeze) => {
                        self.remove(id);
                        self.shutdown.cancelled().await;
                        break;
                    }
                },
                frame = ws.next() => match frame {
                    Some(Ok(WsMessage::Text(text))) => self.record_ack(id, &text),
                    Some(Ok(WsMessage::Close(_)) | Err(_)) | None => break,
                    Some(Ok(_)) => {}
                },
            }
        }
        self.remove(id);
    }

    fn record_ack(&self, conn: u64, text: &str) {
        if let Ok(value) = serde_json::from_str::<Value>(text)
            && let Some(id) = value.get("envelope_id").and_then(Value::as_str)
        {
            if let Some(c) = self.conns().iter_mut().find(|c| c.id == conn) {
                c.unacked.remove(id);
            }
            self.acks
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(id.to_owned());
        }
    }
}

/// A random-enough number for tickets (no RNG dependency: time and a counter, hashed).
fn fastrand_u64() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}
