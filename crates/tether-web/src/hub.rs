//! Following the journal: one watcher per server reads every event committed after the last one
//! it saw and hands it to every open stream.
//!
//! The journal is written by other processes (the loops, `tether answer`, `tether mcp`), so
//! there is nothing to subscribe to but the store's files: the watcher sleeps on `inotify` for
//! writes to `.tether/` (every commit writes the WAL file) and then reads what is new, by seq.
//! A re-read every [`SAFETY_NET`] covers a file system that does not report changes; it costs
//! one indexed query. Streams never read the store in a loop: they read their backlog once,
//! then take events from here (and read again only if they fell behind the channel).

use std::os::fd::AsFd as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use tether_store::{Seq, StoredEvent};
use tokio::sync::{Notify, broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::db::Db;
use crate::error::WebError;

/// How often the journal is re-read without a wake-up.
pub const SAFETY_NET: Duration = Duration::from_secs(2);
/// Events held for streams that have not taken them yet; one that falls further behind reads
/// the store again from its last seq.
const CAPACITY: usize = 4096;
/// Events read per query.
const PAGE: usize = 1000;

/// New journal events for whoever listens.
#[derive(Clone)]
pub struct Hub {
    events: broadcast::Sender<Arc<StoredEvent>>,
    last: watch::Receiver<Seq>,
}

impl Hub {
    /// Starts following the journal from its current end, until `stop` fires.
    pub(crate) async fn start(
        db: Arc<Db>,
        state_dir: &Path,
        stop: CancellationToken,
    ) -> Result<Hub, WebError> {
        let start = db.call(|s| Ok(s.last_seq()?)).await?;
        let (events, _) = broadcast::channel(CAPACITY);
        let (last_tx, last) = watch::channel(start);
        let wake = Wake::new(state_dir, stop.clone());
        let hub = Hub { events, last };
        tokio::spawn(follow(db, hub.events.clone(), last_tx, wake, stop));
        Ok(hub)
    }

    /// Events committed from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<StoredEvent>> {
        self.events.subscribe()
    }

    /// The seq of the newest event handed out.
    pub fn last_seq(&self) -> Seq {
        *self.last.borrow()
    }
}

async fn follow(
    db: Arc<Db>,
    events: broadcast::Sender<Arc<StoredEvent>>,
    last: watch::Sender<Seq>,
    mut wake: Option<Wake>,
    stop: CancellationToken,
) {
    let mut cursor = *last.borrow();
    let mut woken = false;
    loop {
        // A write to the WAL is seen before its commit is visible to readers, so after a
        // wake-up that found nothing the journal is read again a few times, shortly after.
        let retries: &[u64] = if woken {
            &[0, 1, 2, 4, 8, 16, 32]
        } else {
            &[0]
        };
        for &pause in retries {
            tokio::time::sleep(Duration::from_millis(pause)).await;
            match read_new(&db, cursor).await {
                Ok(fresh) if fresh.is_empty() => continue,
                Ok(fresh) => {
                    for e in fresh {
                        cursor = e.seq;
                        let _ = events.send(Arc::new(e));
                    }
                    let _ = last.send(cursor);
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "dashboard: reading the journal failed");
                    break;
                }
            }
        }
        let wait = async {
            match wake.as_mut() {
                Some(w) => w.wait().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = wait => woken = true,
            () = tokio::time::sleep(SAFETY_NET) => woken = false,
        }
    }
}

async fn read_new(db: &Arc<Db>, after: Seq) -> Result<Vec<StoredEvent>, WebError> {
    db.call(move |s| {
        let mut all = Vec::new();
        let mut cursor = after;
        loop {
            let page = s.events_all_after(cursor, PAGE)?;
            let full = page.len() == PAGE;
            if let Some(last) = page.last() {
                cursor = last.seq;
            }
            all.extend(page);
            if !full {
                return Ok(all);
            }
        }
    })
    .await
}

/// `inotify` on the state directory, watched by a thread that wakes the follower when the
/// store's files were written (the thread checks for the stop every second).
struct Wake {
    written: Arc<Notify>,
}

impl Wake {
    /// `None` (with a log line) when inotify cannot be used: the safety net alone then.
    fn new(state_dir: &Path, stop: CancellationToken) -> Option<Wake> {
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
                tracing::warn!(error = %e, "dashboard: cannot watch the store; re-reading it every 2 s");
                return None;
            }
        };
        let written = Arc::new(Notify::new());
        let wake = Arc::clone(&written);
        let spawned = std::thread::Builder::new()
            .name("tether-web-watch".into())
            .spawn(move || watch(&inotify, &wake, &stop));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "dashboard: cannot watch the store; re-reading it every 2 s");
            return None;
        }
        Some(Wake { written })
    }

    /// Returns once the store's files were written since the last call.
    async fn wait(&mut self) {
        self.written.notified().await;
    }
}

fn watch(inotify: &Inotify, written: &Notify, stop: &CancellationToken) {
    while !stop.is_cancelled() {
        let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Ok(0) | Err(nix::Error::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "dashboard: watching the store failed; re-reading it every 2 s");
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
            written.notify_one();
        }
    }
}
