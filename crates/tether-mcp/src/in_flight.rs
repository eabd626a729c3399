//! Counts the tool calls still running, so the server can let them clean up (deregister Zulip
//! queues, leave questions pending) before the process exits.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// How many calls are running; cheap to clone.
#[derive(Clone)]
pub(crate) struct InFlight(Arc<watch::Sender<usize>>);

/// One running call; dropping it ends the call.
pub(crate) struct Busy(Arc<watch::Sender<usize>>);

impl InFlight {
    pub(crate) fn new() -> Self {
        InFlight(Arc::new(watch::Sender::new(0)))
    }

    /// Marks a call as running until the guard is dropped.
    pub(crate) fn enter(&self) -> Busy {
        self.0.send_modify(|n| *n += 1);
        Busy(self.0.clone())
    }

    /// Waits until no call runs, at most `limit`; whether that happened.
    pub(crate) async fn idle(&self, limit: Duration) -> bool {
        let mut rx = self.0.subscribe();
        tokio::time::timeout(limit, rx.wait_for(|n| *n == 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}
