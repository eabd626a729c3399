//! Noticing `tether cancel` from another process while an agent turn runs: the request is an
//! event in the store, so a watcher polls the store (cheaply, by its data version) and fires the
//! turn's cancellation token.

use std::time::Duration;

use tether_store::{Journal, RunId};
use tokio_util::sync::CancellationToken;

/// How often a running iteration checks the store for `tether cancel`.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Fires `cancel` when the run's journal records a cancel request (from another process).
pub async fn watch_for_cancel(journal: Journal, run: RunId, cancel: CancellationToken) {
    let mut seen = None;
    loop {
        let version = journal.store().data_version().ok();
        if version != seen {
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
            () = tokio::time::sleep(CANCEL_POLL) => {}
        }
    }
}
