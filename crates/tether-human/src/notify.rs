//! Cross-process wake-ups: a process waiting for answers listens on one Unix datagram socket in
//! `.tether/notify/`; whoever commits an answer (another `tether` process, the dashboard) pokes
//! every socket there with the question's id. The store stays the source of truth — a poke only
//! says "look again" — so a lost poke costs latency, never an answer (waiters also re-check on a
//! slow timer).
//!
//! All the waits of one broker (and its clones) share one socket, bound while anyone waits:
//! 1,000 pending questions cost one descriptor and one receiving task, and a poke wakes only the
//! waiters of the question it names. A poke naming no question (older senders send `!`) wakes
//! them all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tether_store::QuestionId;
use tokio::net::UnixDatagram;
use tokio::sync::Notify;

/// How long a poke waits for room in a listener's queue (a burst of answers can fill it; the
/// kernel's default is 10 datagrams) before giving up on that listener.
const SEND_TIMEOUT: Duration = Duration::from_millis(50);

/// The directory of listening sockets.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("notify")
}

/// Per question id, its waits: a key each (to unregister) and a wake-up each.
type Waits = HashMap<String, Vec<(u64, Arc<Notify>)>>;

/// Waiters by question id, each with its own wake-up.
#[derive(Default)]
struct Waiters {
    by_question: Mutex<Waits>,
    next_key: AtomicU64,
}

impl Waiters {
    fn lock(&self) -> MutexGuard<'_, Waits> {
        self.by_question
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the waiters of `payload`'s question, or everyone when it names none.
    fn wake(&self, payload: &[u8]) {
        let waiters = self.lock();
        let named = std::str::from_utf8(payload)
            .ok()
            .and_then(|s| s.parse::<QuestionId>().ok());
        match named {
            Some(id) => {
                for (_, notify) in waiters.get(id.as_str()).into_iter().flatten() {
                    notify.notify_one();
                }
            }
            None => {
                for (_, notify) in waiters.values().flatten() {
                    notify.notify_one();
                }
            }
        }
    }
}

/// The bound socket and the task receiving on it; the socket file is removed on drop.
struct Socket {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Socket {
    /// `None` when it cannot bind (the path is too long for a Unix socket, or the directory is
    /// not writable): waiters then rely on the slow re-check.
    fn bind(state_dir: &Path, waiters: Arc<Waiters>) -> Option<Socket> {
        let dir = dir(state_dir);
        std::fs::create_dir_all(&dir).ok()?;
        let path = dir.join(format!("{}-{}.sock", std::process::id(), fastrand::u32(..)));
        let socket = match UnixDatagram::bind(&path) {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, path = %path.display(), "no notification socket");
                return None;
            }
        };
        let task = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            while let Ok(n) = socket.recv(&mut buf).await {
                waiters.wake(&buf[..n]);
            }
        });
        Some(Socket { path, task })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One listening socket shared by every wait made through it (clones share it too). It is bound
/// by the first [`SharedListener::subscribe`] and closed when the last [`Subscription`] drops.
#[derive(Clone)]
pub struct SharedListener {
    state_dir: PathBuf,
    waiters: Arc<Waiters>,
    socket: Arc<Mutex<Weak<Option<Socket>>>>,
}

impl SharedListener {
    /// A listener for the workspace whose state directory is `state_dir` (`.tether/`).
    pub fn new(state_dir: PathBuf) -> Self {
        SharedListener {
            state_dir,
            waiters: Arc::default(),
            socket: Arc::default(),
        }
    }

    /// Starts listening for pokes about `id`, binding the socket if nobody listens yet. Must be
    /// called inside a tokio runtime.
    pub fn subscribe(&self, id: &QuestionId) -> Subscription {
        let socket = {
            let mut current = self.socket.lock().unwrap_or_else(PoisonError::into_inner);
            match current.upgrade() {
                Some(s) if s.is_some() => s,
                _ => {
                    let s = Arc::new(Socket::bind(&self.state_dir, self.waiters.clone()));
                    *current = Arc::downgrade(&s);
                    s
                }
            }
        };
        let key = self.waiters.next_key.fetch_add(1, Ordering::Relaxed);
        let notify = Arc::new(Notify::new());
        self.waiters
            .lock()
            .entry(id.as_str().to_owned())
            .or_default()
            .push((key, notify.clone()));
        Subscription {
            waiters: self.waiters.clone(),
            id: id.as_str().to_owned(),
            key,
            notify,
            socket,
        }
    }

    /// Wakes the waiters of `id`, or every waiter when `None`: for pokes that come another way
    /// than the socket (a team store's notifications from other machines).
    pub fn wake(&self, id: Option<&QuestionId>) {
        let payload = id.map_or("!", QuestionId::as_str);
        self.waiters.wake(payload.as_bytes());
    }

    /// The socket's path while one is bound.
    pub fn socket_path(&self) -> Option<PathBuf> {
        let current = self.socket.lock().unwrap_or_else(PoisonError::into_inner);
        current
            .upgrade()
            .and_then(|s| s.as_ref().as_ref().map(|s| s.path.clone()))
    }
}

/// One wait's registration on a [`SharedListener`]; unregisters on drop.
pub struct Subscription {
    waiters: Arc<Waiters>,
    id: String,
    key: u64,
    notify: Arc<Notify>,
    socket: Arc<Option<Socket>>,
}

impl Subscription {
    /// Resolves at the next poke about this question (or at once if one came since the last
    /// call): a poke is never lost between two looks at the store.
    pub async fn poked(&self) {
        self.notify.notified().await;
    }

    /// Whether a socket is bound; without one only the slow re-check finds answers.
    pub fn is_listening(&self) -> bool {
        self.socket.is_some()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut waiters = self.waiters.lock();
        if let Some(list) = waiters.get_mut(&self.id) {
            list.retain(|(k, _)| *k != self.key);
            if list.is_empty() {
                waiters.remove(&self.id);
            }
        }
    }
}

/// Pokes every listener of the workspace about `id`; removes sockets nobody listens on any more.
pub fn poke(state_dir: &Path, id: &QuestionId) {
    let Ok(entries) = std::fs::read_dir(dir(state_dir)) else {
        return;
    };
    let Ok(sender) = std::os::unix::net::UnixDatagram::unbound() else {
        return;
    };
    let _ = sender.set_write_timeout(Some(SEND_TIMEOUT));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "sock")
            && let Err(e) = sender.send_to(id.as_str().as_bytes(), &path)
        {
            match e.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    let _ = std::fs::remove_file(&path);
                }
                kind => tracing::debug!(?kind, path = %path.display(), "a poke was not delivered"),
            }
        }
    }
}
