//! An event queue the client owns, deregistered when the client is done with it.
//!
//! Zulip keeps an unpolled queue for ten minutes; a client that stops waiting should not leave
//! it behind. [`QueueGuard::close`] deletes it and waits (briefly) for the answer; dropping an
//! open guard (shutdown, a dropped future) spawns a best-effort delete on the current runtime.

use std::time::Duration;

use crate::api::{RegisteredQueue, ZulipApi};
use crate::wire::Event;

/// How long a deregistration may take before the client gives up on it.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub(crate) struct QueueGuard {
    api: ZulipApi,
    queue_id: String,
    last_event_id: i64,
    open: bool,
}

impl QueueGuard {
    pub(crate) fn new(api: ZulipApi, queue: RegisteredQueue) -> Self {
        Self {
            api,
            queue_id: queue.queue_id,
            last_event_id: queue.last_event_id,
            open: true,
        }
    }

    pub(crate) fn queue_id(&self) -> &str {
        &self.queue_id
    }

    pub(crate) fn last_event_id(&self) -> i64 {
        self.last_event_id
    }

    /// Acknowledges `events` (heartbeats included) in the next poll.
    pub(crate) fn ack(&mut self, events: &[Event]) {
        for event in events {
            self.last_event_id = self.last_event_id.max(event.id());
        }
    }

    /// The server said the queue is gone: nothing to delete.
    pub(crate) fn forget(mut self) {
        self.open = false;
    }

    /// Deletes the queue, waiting at most a few seconds; failures are logged, not returned.
    pub(crate) async fn close(mut self) {
        self.open = false;
        let deleted = tokio::time::timeout(DELETE_TIMEOUT, self.api.delete_queue(&self.queue_id));
        match deleted.await {
            Ok(Ok(())) => tracing::debug!(queue_id = %self.queue_id, "zulip queue deregistered"),
            Ok(Err(err)) => {
                tracing::warn!(queue_id = %self.queue_id, error = %err, "cannot deregister the zulip queue");
            }
            Err(_) => {
                tracing::warn!(queue_id = %self.queue_id, "deregistering the zulip queue timed out");
            }
        }
    }
}

impl Drop for QueueGuard {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let api = self.api.clone();
        let queue_id = std::mem::take(&mut self.queue_id);
        runtime.spawn(async move {
            let deleted = tokio::time::timeout(DELETE_TIMEOUT, api.delete_queue(&queue_id)).await;
            if !matches!(deleted, Ok(Ok(()))) {
                tracing::debug!(%queue_id, "best-effort deregistration of a dropped zulip queue failed");
            }
        });
    }
}
