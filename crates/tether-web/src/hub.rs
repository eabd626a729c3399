//! Following the journal: one watcher per server reads every event committed after the last one
//! it saw and hands it to every open stream.
//!
//! The journal is written by other processes (the loops, `tether answer`, `tether mcp`), maybe
//! on other machines, so the watcher sleeps until something says the store changed and then
//! reads what is new, by seq. What wakes it depends on the store:
//!
//! - **The workspace's own file**: `inotify` on `.tether/` (every commit writes the WAL file).
//! - **A team's database**: there is no local file to watch, so no `inotify`; the store's own
//!   feed of changes ([`tether_store::Store::follow`], `LISTEN/NOTIFY`) wakes it when the
//!   backend has one.
//! - **Either**: an outside wake-up the caller hands in ([`Wakes::outside`], from
//!   [`crate::Bound::wake_on`]): a [`Notify`] it calls `notify_one` on whenever it hears of a
//!   commit (the binary feeds it from the team store's notifications). A wake-up is only a poke:
//!   the watcher always re-reads the store after its last seq, so a poke too many costs one
//!   indexed query and a poke missed is made up by the next one.
//!
//! A re-read every [`SAFETY_NET`] (or [`Wakes::safety_net`]) covers a file system that does not
//! report changes and a feed that dropped a notification while it reconnected; it costs one
//! indexed query. Streams never read the store in a loop: they read their backlog once, then
//! take events from here (and read again only if they fell behind the channel).

use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use tether_store::{BackendKind, Following, Seq, StoredEvent};
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

/// What wakes the journal's watcher, besides the store's own feed of changes.
#[derive(Debug, Clone)]
pub struct Wakes {
    /// The workspace's `.tether/`, watched with `inotify` when the store is its embedded file.
    pub state_dir: PathBuf,
    /// Notified (with `notify_one`) by the caller whenever it hears of a commit.
    pub outside: Option<Arc<Notify>>,
    /// How often the journal is re-read without a wake-up.
    pub safety_net: Duration,
}

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
        wakes: Wakes,
        stop: CancellationToken,
    ) -> Result<Hub, WebError> {
        let (start, kind) = db.call(|s| Ok((s.last_seq()?, s.kind()))).await?;
        let (events, _) = broadcast::channel(CAPACITY);
        let (last_tx, last) = watch::channel(start);
        let written = Arc::new(Notify::new());
        let feed = follow_store(&db, kind, &written).await;
        let watching = match kind {
            BackendKind::Embedded => watch_files(&wakes.state_dir, &written, stop.clone()),
            BackendKind::Team => false,
        };
        if !watching && feed.is_none() && wakes.outside.is_none() {
            tracing::warn!(
                every = ?wakes.safety_net,
                "dashboard: nothing tells it of new events; re-reading the store periodically"
            );
        }
        let wake = Wake {
            written,
            outside: wakes.outside,
            _feed: feed.map(std::sync::Mutex::new),
        };
        let hub = Hub { events, last };
        // What was committed before the wake-ups were set up; from here on, they say.
        catch_up(&db, start, false, &hub.events, &last_tx).await;
        tokio::spawn(follow(
            db,
            hub.events.clone(),
            last_tx,
            wake,
            wakes.safety_net,
            stop,
        ));
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
    wake: Wake,
    safety_net: Duration,
    stop: CancellationToken,
) {
    let mut cursor = *last.borrow();
    loop {
        let woken = tokio::select! {
            () = stop.cancelled() => return,
            () = wake.wait() => true,
            () = tokio::time::sleep(safety_net) => false,
        };
        cursor = catch_up(&db, cursor, woken, &events, &last).await;
    }
}

/// Reads what was committed after `cursor` and hands it out; returns the new cursor.
async fn catch_up(
    db: &Arc<Db>,
    mut cursor: Seq,
    woken: bool,
    events: &broadcast::Sender<Arc<StoredEvent>>,
    last: &watch::Sender<Seq>,
) -> Seq {
    // A write to the WAL is seen before its commit is visible to readers, so after a wake-up
    // that found nothing the journal is read again a few times, shortly after.
    let retries: &[u64] = if woken {
        &[0, 1, 2, 4, 8, 16, 32]
    } else {
        &[0]
    };
    for &pause in retries {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        match read_new(db, cursor).await {
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
    cursor
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

/// Everything that can wake the follower.
struct Wake {
    /// Notified by the `inotify` thread and the store's feed.
    written: Arc<Notify>,
    /// Notified by the caller.
    outside: Option<Arc<Notify>>,
    /// Keeps the store's feed of changes going (and the store it came from open).
    _feed: Option<std::sync::Mutex<(Following, tether_store::Store)>>,
}

impl Wake {
    /// Returns once something said the store changed since the last call.
    async fn wait(&self) {
        let outside = async {
            match &self.outside {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = self.written.notified() => {}
            () = outside => {}
        }
    }
}

/// Subscribes to the store's feed of changes (a team store's), if it has one: every change
/// notifies `written`.
async fn follow_store(
    db: &Arc<Db>,
    kind: BackendKind,
    written: &Arc<Notify>,
) -> Option<(Following, tether_store::Store)> {
    if kind == BackendKind::Embedded {
        return None;
    }
    let db = Arc::clone(db);
    let wake = Arc::clone(written);
    let made = tokio::task::spawn_blocking(move || {
        let store = db.connect()?;
        let feed = store.follow(Box::new(move |_change| wake.notify_one()));
        Ok::<_, WebError>(feed.map(|f| (f, store)))
    })
    .await;
    match made {
        Ok(Ok(feed)) => feed,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "dashboard: cannot follow the store's changes");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "dashboard: cannot follow the store's changes");
            None
        }
    }
}

/// Starts `inotify` on the state directory, watched by a thread that notifies `written` when
/// the store's files were written (the thread checks for the stop every second). `false` (with
/// a log line) when inotify cannot be used.
fn watch_files(state_dir: &Path, written: &Arc<Notify>, stop: CancellationToken) -> bool {
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
            tracing::warn!(error = %e, "dashboard: cannot watch the store's files");
            return false;
        }
    };
    let wake = Arc::clone(written);
    let spawned = std::thread::Builder::new()
        .name("tether-web-watch".into())
        .spawn(move || watch(&inotify, &wake, &stop));
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "dashboard: cannot watch the store's files");
        return false;
    }
    true
}

fn watch(inotify: &Inotify, written: &Notify, stop: &CancellationToken) {
    while !stop.is_cancelled() {
        let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(1000u16)) {
            Ok(0) | Err(nix::Error::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "dashboard: watching the store's files failed; re-reading it periodically");
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
