//! One Socket Mode connection per client, shared by every question the process waits on.
//!
//! The connection runs while at least one waiter is subscribed (dialed on the first, closed a
//! little after the last leaves). Each `hello` starts a new **generation**: a waiter that sees a generation it
//! has not caught up with reads its thread with `conversations.replies`, so whatever was said
//! while no socket was open is found. Between reconnects nothing is polled.
//!
//! Slack hands each event to only one of an app's open sockets, so an event may reach a process
//! that does not wait on its thread: such events (in the configured channel) go to the
//! *unclaimed* handler, which the caller uses to store the answer for whoever waits on it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::api::SlackApi;
use crate::error::SlackError;
use crate::retry::{Backoff, RetryPolicy, guarded, pause};
use crate::socket::{self, Ended, SocketOptions};
use crate::wire::{Incoming, Ts};

/// What is done with an event no waiter of this process claims.
pub type UnclaimedHandler = Arc<dyn Fn(Incoming) + Send + Sync>;

/// The connection's state, as waiters see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Status {
    /// Not connected (yet, or again).
    Down,
    /// Connected; the number counts `hello`s since the client was made.
    Up(u64),
    /// The app-level token was refused: nobody can be reached until it is fixed.
    Failed(SlackError),
}

pub(crate) struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    api: SlackApi,
    channel: String,
    socket: SocketOptions,
    retry: RetryPolicy,
    state: Mutex<State>,
    status: watch::Sender<Status>,
    generation: AtomicU64,
    connections: AtomicU64,
}

#[derive(Default)]
struct State {
    waiters: HashMap<u64, Waiter>,
    next_key: u64,
    /// The running connection task: its stop token and its number.
    running: Option<(CancellationToken, u64)>,
    runs: u64,
    unclaimed: Option<UnclaimedHandler>,
}

struct Waiter {
    channel: String,
    thread: Ts,
    tx: mpsc::UnboundedSender<Incoming>,
}

/// A waiter's place in the hub; leaving it (drop) may close the connection.
pub(crate) struct Subscription {
    inner: Arc<Inner>,
    key: u64,
    pub(crate) events: mpsc::UnboundedReceiver<Incoming>,
    pub(crate) status: watch::Receiver<Status>,
}

impl Drop for Subscription {
    /// The last waiter leaving closes the connection after [`SocketOptions::linger`]: events
    /// already on their way to this socket (a button pressed just now for another process's
    /// question) are still acknowledged and routed, instead of being lost with the socket.
    fn drop(&mut self) {
        let run = {
            let mut state = self.inner.lock();
            state.waiters.remove(&self.key);
            if !state.waiters.is_empty() {
                return;
            }
            match &state.running {
                Some((_, run)) => *run,
                None => return,
            }
        };
        let inner = Arc::clone(&self.inner);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if !inner.socket.linger.is_zero() => {
                runtime.spawn(async move {
                    tokio::time::sleep(inner.socket.linger).await;
                    inner.stop_if_idle(run);
                });
            }
            _ => inner.stop_if_idle(run),
        }
    }
}

impl Hub {
    pub(crate) fn new(
        api: SlackApi,
        channel: String,
        socket: SocketOptions,
        retry: RetryPolicy,
    ) -> Self {
        Hub {
            inner: Arc::new(Inner {
                api,
                channel,
                socket,
                retry,
                state: Mutex::new(State::default()),
                status: watch::Sender::new(Status::Down),
                generation: AtomicU64::new(0),
                connections: AtomicU64::new(0),
            }),
        }
    }

    pub(crate) fn set_unclaimed(&self, handler: UnclaimedHandler) {
        self.inner.lock().unclaimed = Some(handler);
    }

    /// How many times a socket was opened (reached `hello`).
    pub(crate) fn connections(&self) -> u64 {
        self.inner.connections.load(Ordering::Relaxed)
    }

    /// Subscribes to the events of `thread` in `channel`, starting the connection if needed.
    pub(crate) fn subscribe(&self, channel: &str, thread: &Ts) -> Subscription {
        let (tx, events) = mpsc::unbounded_channel();
        let mut state = self.inner.lock();
        let key = state.next_key;
        state.next_key += 1;
        state.waiters.insert(
            key,
            Waiter {
                channel: channel.to_owned(),
                thread: thread.clone(),
                tx,
            },
        );
        if state.running.is_none() {
            state.runs += 1;
            let run = state.runs;
            let stop = CancellationToken::new();
            state.running = Some((stop.clone(), run));
            self.inner.status.send_replace(Status::Down);
            let inner = Arc::clone(&self.inner);
            tokio::spawn(async move { inner.run(run, stop).await });
        }
        Subscription {
            inner: Arc::clone(&self.inner),
            key,
            events,
            status: self.inner.status.subscribe(),
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes the connection of run `run` if it is still current and nobody waits.
    fn stop_if_idle(&self, run: u64) {
        let mut state = self.lock();
        if state.waiters.is_empty() && state.running.as_ref().is_some_and(|(_, r)| *r == run) {
            if let Some((stop, _)) = state.running.take() {
                stop.cancel();
            }
            self.status.send_replace(Status::Down);
        }
    }

    /// Sets the status if run `run` is still the current one.
    fn publish(&self, run: u64, status: Status) -> bool {
        let state = self.lock();
        if state.running.as_ref().is_some_and(|(_, r)| *r == run) {
            self.status.send_replace(status);
            true
        } else {
            false
        }
    }

    /// Hands `incoming` to the waiters of its thread, or to the unclaimed handler.
    fn route(&self, incoming: Incoming) {
        let handler = {
            let state = self.lock();
            let Some((channel, thread)) = incoming.place() else {
                return;
            };
            if channel != self.channel {
                return;
            }
            let mut claimed = false;
            for waiter in state.waiters.values() {
                if waiter.channel == channel && waiter.thread == thread {
                    claimed |= waiter.tx.send(incoming.clone()).is_ok();
                }
            }
            if claimed {
                return;
            }
            state.unclaimed.clone()
        };
        if let Some(handler) = handler {
            handler(incoming);
        }
    }

    /// Dials, serves and dials again until stopped (or the app-level token is refused).
    async fn run(self: Arc<Self>, run: u64, stop: CancellationToken) {
        let mut backoff = Backoff::from(self.retry.clone());
        loop {
            let url = match guarded(self.api.open_connection(), &stop, None).await {
                Ok(url) => url,
                Err(SlackError::Cancelled) => return,
                Err(err) if err.is_retryable() => {
                    let delay = backoff.delay(&err);
                    tracing::warn!(error = %err, ?delay, "opening slack socket mode failed; retrying");
                    if pause(delay, &stop, None).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(err) => {
                    tracing::error!(error = %err, "slack socket mode cannot be opened");
                    self.publish(run, Status::Failed(err));
                    let mut state = self.lock();
                    if state.running.as_ref().is_some_and(|(_, r)| *r == run) {
                        state.running = None;
                    }
                    return;
                }
            };
            let connected = tokio::select! {
                () = stop.cancelled() => return,
                connected = socket::connect(&url, &self.socket) => connected,
            };
            let socket = match connected {
                Ok(socket) => socket,
                Err(err) => {
                    let delay = backoff.delay(&err);
                    tracing::warn!(error = %err, ?delay, "slack socket failed; dialing again");
                    if pause(delay, &stop, None).await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            backoff.reset();
            self.connections.fetch_add(1, Ordering::Relaxed);
            let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
            if !self.publish(run, Status::Up(generation)) {
                return;
            }
            tracing::debug!(generation, "slack socket mode connected");
            let route = |incoming| self.route(incoming);
            let ended = socket::serve(socket, &self.socket, &stop, &route).await;
            if !self.publish(run, Status::Down) {
                return;
            }
            match ended {
                Ended::Stopped => return,
                Ended::Disconnect(reason) => {
                    tracing::info!(%reason, "slack asked to reconnect");
                }
                Ended::Lost(detail) => {
                    let delay = backoff.exponential();
                    tracing::warn!(%detail, ?delay, "slack socket lost; dialing again");
                    if pause(delay, &stop, None).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}
