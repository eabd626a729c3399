//! Noticing `tether cancel` from another process while an agent turn runs: the request is an
//! event in the store. A store with a feed of changes (a team store, whose notifications reach
//! every machine) wakes the watcher when the run is asked something; otherwise the watcher polls
//! the store cheaply, by its data version.

use std::sync::Arc;
use std::time::Duration;

use tether_store::{Change, Journal, RunId};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How often a running iteration checks the store for `tether cancel` without a feed.
const CANCEL_POLL: Duration = Duration::from_millis(100);
/// How often it re-checks anyway when a feed wakes it (a lost notification costs this much).
const SAFETY_NET: Duration = Duration::from_secs(2);

/// Fires `cancel` when the run's journal records a cancel request (from another process).
pub async fn watch_for_cancel(journal: Journal, run: RunId, cancel: CancellationToken) {
    let asked = Arc::new(Notify::new());
    let wake = Arc::clone(&asked);
    let this_run = run.clone();
    let following = journal.store().follow(Box::new(move |change| match change {
        Change::Control(id) if id == this_run => wake.notify_one(),
        Change::Resync => wake.notify_one(),
        _ => {}
    }));
    let pause = if following.is_some() {
        SAFETY_NET
    } else {
        CANCEL_POLL
    };
    let mut seen = None;
    loop {
        let version = journal.store().data_version().ok();
        if version != seen || following.is_some() {
            seen = version;
            if journal
                .state(&run)
                .is_ok_and(|s| s.cancel_requested.is_some())
            {
                cancel.cancel();
                return;
            }
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = asked.notified() => {}
            () = tokio::time::sleep(pause) => {}
        }
    }
}
