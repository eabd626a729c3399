//! Cross-process wake-ups: a process waiting for an answer listens on a Unix datagram socket in
//! `.tether/notify/`; whoever commits an answer (another `tether` process, the dashboard) pokes
//! every socket there. The store stays the source of truth — a poke only says "look again" — so
//! a lost poke costs latency, never an answer (waiters also re-check on a slow timer).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::UnixDatagram;
use tokio::sync::Notify;

/// The directory of listening sockets.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("notify")
}

/// A listening socket; wakes [`Listener::notified`] waiters on every poke. Removed on drop.
pub struct Listener {
    path: PathBuf,
    wake: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Listener {
    /// Binds a socket for this process. `None` when it cannot (the path is too long for a Unix
    /// socket, or the directory is not writable): waiters then rely on the slow re-check.
    pub fn bind(state_dir: &Path) -> Option<Listener> {
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
        let wake = Arc::new(Notify::new());
        let waker = wake.clone();
        let task = tokio::spawn(async move {
            let mut buf = [0u8; 16];
            while socket.recv(&mut buf).await.is_ok() {
                waker.notify_waiters();
            }
        });
        Some(Listener { path, wake, task })
    }

    /// Resolves at the next poke after this call.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.wake.notified()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Pokes every listener of the workspace; removes sockets nobody listens on any more.
pub fn poke(state_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir(state_dir)) else {
        return;
    };
    let Ok(sender) = std::os::unix::net::UnixDatagram::unbound() else {
        return;
    };
    let _ = sender.set_nonblocking(true);
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "sock")
            && let Err(e) = sender.send_to(b"!", &path)
            && e.kind() == std::io::ErrorKind::ConnectionRefused
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}
