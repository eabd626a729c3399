//! When the store changed: the one way every live surface (the dashboard's journal follower,
//! `tether watch`) learns that something was committed, without reading the store in a loop.
//!
//! - **The workspace's own file**: `inotify` on `.tether/` (every commit writes the WAL file),
//!   watched by a thread of its own.
//! - **A team's database**: the store's own feed of changes ([`Store::follow`],
//!   `LISTEN/NOTIFY`), on a connection kept for it.
//!
//! A change is only a poke: whoever is told re-reads the journal after the last event it saw,
//! so a poke too many costs one indexed query. Callers keep a slow re-read as a safety net for
//! a file system that does not report changes, or a feed that reconnected.

use std::os::fd::AsFd as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use tether_store::{BackendKind, Following, Store, StoreError};

/// What to call when the store changed.
pub type OnChanged = Arc<dyn Fn() + Send + Sync>;

/// The watch on a store; it stops when dropped.
pub struct Changes {
    stop: Arc<AtomicBool>,
    /// Keeps a team store's feed going (and the connection it came from open; behind a lock
    /// so the watch can be shared between threads).
    _feed: Option<std::sync::Mutex<(Following, Store)>>,
    watching: bool,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("watching", &self.watching)
            .finish_non_exhaustive()
    }
}

impl Changes {
    /// Watches the store of `kind` — its files in `state_dir` (embedded), or the feed of a
    /// connection `connect` opens for it (team) — calling `changed` on every change.
    pub fn watch(
        kind: BackendKind,
        state_dir: &Path,
        connect: impl FnOnce() -> Result<Store, StoreError>,
        changed: OnChanged,
    ) -> Changes {
        let stop = Arc::new(AtomicBool::new(false));
        let (feed, watching) = match kind {
            BackendKind::Embedded => (None, watch_files(state_dir, &changed, &stop)),
            BackendKind::Team => {
                let feed = follow_store(connect, &changed);
                let watching = feed.is_some();
                (feed, watching)
            }
        };
        Changes {
            stop,
            _feed: feed.map(std::sync::Mutex::new),
            watching,
        }
    }

    /// A watch that tells of nothing (the caller's safety net is all there is).
    pub fn none() -> Changes {
        Changes {
            stop: Arc::new(AtomicBool::new(true)),
            _feed: None,
            watching: false,
        }
    }

    /// Whether anything tells of changes (`false`: the caller's safety net is all there is).
    pub fn watching(&self) -> bool {
        self.watching
    }
}

impl Drop for Changes {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A team store's feed of changes, on a connection of its own.
fn follow_store(
    connect: impl FnOnce() -> Result<Store, StoreError>,
    changed: &OnChanged,
) -> Option<(Following, Store)> {
    let store = match connect() {
        Ok(store) => store,
        Err(e) => {
            tracing::warn!(error = %e, "cannot follow the store's changes");
            return None;
        }
    };
    let wake = Arc::clone(changed);
    let feed = store.follow(Box::new(move |_change| wake()))?;
    Some((feed, store))
}

/// Starts `inotify` on the state directory, watched by a thread that calls `changed` when the
/// store's files were written (checking for the stop every second). `false` (with a log line)
/// when inotify cannot be used.
fn watch_files(state_dir: &Path, changed: &OnChanged, stop: &Arc<AtomicBool>) -> bool {
    let made = (|| {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        inotify.add_watch(
            state_dir,
            AddWatchFlags::IN_MODIFY
                | AddWatchFlags::IN_CREATE
                | AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_CLOSE_WRITE,
        )?;
        Ok::<_, nix::Error>(inotify)
    })();
    let inotify = match made {
        Ok(i) => i,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the store's files");
            return false;
        }
    };
    let wake = Arc::clone(changed);
    let stop = Arc::clone(stop);
    let spawned = std::thread::Builder::new()
        .name("tether-store-watch".into())
        .spawn(move || watch(&inotify, &*wake, &stop));
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot watch the store's files");
        return false;
    }
    true
}

fn watch(inotify: &Inotify, changed: &(dyn Fn() + Send + Sync), stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Ok(0) | Err(nix::Error::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "watching the store's files failed; re-reading it periodically");
                return;
            }
        }
        let mut store_written = false;
        while let Ok(batch) = inotify.read_events() {
            store_written |= batch.iter().any(|e| {
                e.name
                    .as_ref()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n == "tether.db" || n == "tether.db-wal")
            });
        }
        if store_written {
            changed();
        }
    }
}
