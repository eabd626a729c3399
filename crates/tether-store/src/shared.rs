//! The loops' handle on the store: append an event, then hand every newly stored event to the
//! sinks (the live progress line, `--events jsonl` on stdout) in journal order.
//!
//! The store connection is shared behind a mutex because a loop records events from more than
//! one task (the loop itself and the executor's observer).

use std::sync::{Arc, Mutex, MutexGuard};

use crate::{Event, RunId, RunState, Seq, Store, StoreError, StoredEvent};

/// The run a tool or task belongs to, set once the run exists (tools are built before it).
pub type RunCell = Arc<Mutex<Option<RunId>>>;

/// Receives every event a loop records, after it is committed.
pub trait EventSink: Send + Sync {
    /// Called once per event, in journal order.
    fn event(&self, event: &StoredEvent);
}

/// A store shared by a loop's tasks, with sinks for committed events.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    store: Mutex<Store>,
    sinks: Vec<Arc<dyn EventSink>>,
    emitted: Mutex<Seq>,
    /// The run this journal's process drives, and its lease's fencing token.
    fence: Mutex<Option<(RunId, i64)>>,
}

impl Journal {
    /// Wraps `store`; `sinks` see every event appended through this journal from now on.
    pub fn new(store: Store, sinks: Vec<Arc<dyn EventSink>>) -> Result<Self, StoreError> {
        let emitted = store.last_seq()?;
        Ok(Journal {
            inner: Arc::new(Inner {
                store: Mutex::new(store),
                sinks,
                emitted: Mutex::new(emitted),
                fence: Mutex::new(None),
            }),
        })
    }

    /// The store, for reads and for writes that are not events.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        // A poisoned lock only means another task panicked mid-call; SQLite's own transaction
        // keeps the data consistent, so carry on with the connection.
        self.inner
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends `event` to `run`'s journal and passes it (and anything appended before it by
    /// this journal but not yet passed on) to the sinks. For the run this journal's process
    /// drives ([`Journal::fence`]), only while its lease holds: else
    /// [`StoreError::LeaseLost`] and nothing written.
    pub fn append(&self, run: &RunId, event: &Event) -> Result<Seq, StoreError> {
        let store = self.store();
        let seq = match self.token_for(run) {
            Some(token) => store
                .append_fenced(run, token, std::slice::from_ref(event))?
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::corrupt("an append returned no seq"))?,
            None => store.append(Some(run), event)?,
        };
        self.emit(store, run)?;
        Ok(seq)
    }

    /// This journal's process drives `run` under the lease whose fencing token is `token`:
    /// every event of `run` appended through it presents the token from now on.
    pub fn fence(&self, run: &RunId, token: i64) {
        *self.fenced() = Some((run.clone(), token));
    }

    /// This journal's process no longer drives a run.
    pub fn unfence(&self) {
        *self.fenced() = None;
    }

    /// Refuses unless this journal's process still holds the lease of `run` it was fenced with
    /// (a run it does not drive passes): for a write that is not an event, checked just before.
    pub fn check_fence(&self, run: &RunId) -> Result<(), StoreError> {
        let Some(token) = self.token_for(run) else {
            return Ok(());
        };
        let store = self.store();
        let lease = store.run_lease(run)?;
        match crate::Lapse::of(lease.as_ref(), token, crate::now_ms()) {
            None => Ok(()),
            Some(lapse) => Err(StoreError::LeaseLost {
                run: run.to_string(),
                token,
                lapse,
            }),
        }
    }

    fn token_for(&self, run: &RunId) -> Option<i64> {
        self.fenced()
            .as_ref()
            .filter(|(fenced, _)| fenced == run)
            .map(|(_, token)| *token)
    }

    fn fenced(&self) -> MutexGuard<'_, Option<(RunId, i64)>> {
        self.inner
            .fence
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Passes to the sinks what was stored for `run` since they last heard, by writes that are
    /// not [`Journal::append`] — a question stored with [`Store::insert_question`], an answer —
    /// so they learn of it now rather than at the run's next event.
    pub fn publish(&self, run: &RunId) -> Result<(), StoreError> {
        self.emit(self.store(), run)
    }

    /// Hands the sinks `run`'s events they have not seen, in journal order.
    fn emit(&self, store: MutexGuard<'_, Store>, run: &RunId) -> Result<(), StoreError> {
        if self.inner.sinks.is_empty() {
            return Ok(());
        }
        let mut emitted = self
            .inner
            .emitted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let fresh = store.events(run, *emitted, usize::MAX)?;
        drop(store);
        for e in &fresh {
            for sink in &self.inner.sinks {
                sink.event(e);
            }
        }
        if let Some(last) = fresh.last() {
            *emitted = last.seq;
        }
        Ok(())
    }

    /// The run's state as the store's projection holds it.
    pub fn state(&self, run: &RunId) -> Result<RunState, StoreError> {
        Ok(self.store().run(run)?.state)
    }
}
