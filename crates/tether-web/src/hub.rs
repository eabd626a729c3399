//! Following the journal: one watcher per server reads every event committed after the last one
//! it saw and hands it to every open stream.
//!
//! The journal is written by other processes (the loops, `tether answer`, `tether mcp`), maybe
//! on other machines, so the watcher sleeps until something says the store changed and then
//! reads what is new, by seq. What wakes it:
//!
//! - **The store's changes** ([`tether_read::Changes`], which `tether watch` uses too):
//!   `inotify` on `.tether/` for the workspace's own file (every commit writes the WAL file),
//!   the store's own feed of changes (`LISTEN/NOTIFY`) for a team's database.
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

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_store::{BackendKind, Seq, StoredEvent};
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
        let changes = watch_changes(&db, kind, &wakes.state_dir, &written).await;
        if !changes.watching() && wakes.outside.is_none() {
            tracing::warn!(
                every = ?wakes.safety_net,
                "dashboard: nothing tells it of new events; re-reading the store periodically"
            );
        }
        let wake = Wake {
            written,
            outside: wakes.outside,
            _changes: changes,
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
    /// Tells `written` of the store's changes while it is kept.
    _changes: tether_read::Changes,
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

/// Watches the store for changes ([`tether_read::Changes`]), each one notifying `written`.
async fn watch_changes(
    db: &Arc<Db>,
    kind: BackendKind,
    state_dir: &Path,
    written: &Arc<Notify>,
) -> tether_read::Changes {
    let db = Arc::clone(db);
    let wake = Arc::clone(written);
    let state_dir = state_dir.to_path_buf();
    let made = tokio::task::spawn_blocking(move || {
        let connect = || {
            db.connect().map_err(|e| match e {
                WebError::Store(e) => e,
                other => tether_store::StoreError::Unavailable {
                    detail: other.to_string(),
                },
            })
        };
        tether_read::Changes::watch(
            kind,
            &state_dir,
            connect,
            Arc::new(move || wake.notify_one()),
        )
    })
    .await;
    match made {
        Ok(changes) => changes,
        Err(e) => {
            tracing::warn!(error = %e, "dashboard: cannot watch the store's changes");
            tether_read::Changes::none()
        }
    }
}
