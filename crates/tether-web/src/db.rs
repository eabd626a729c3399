//! The server's store connections: a small pool used from blocking threads, so a slow read
//! never stalls the async workers that serve streams. Stores are opened through a
//! [`Connector`], so the same server shows a workspace's own file or a team's database.

use std::sync::{Arc, Mutex, PoisonError};

use tether_store::{Connector, Store};

use crate::error::WebError;

/// Idle connections kept for reuse; more are opened under load and closed after.
const KEEP_IDLE: usize = 8;

/// Connections to one store.
pub(crate) struct Db {
    connector: Arc<dyn Connector>,
    idle: Mutex<Vec<Store>>,
}

impl Db {
    /// Opens a first store through `connector` (an embedded file is created and migrated if
    /// needed), so a store that cannot be reached fails the start, not the first request.
    pub(crate) fn open(connector: Arc<dyn Connector>) -> Result<Arc<Db>, WebError> {
        let first = connector.connect()?;
        Ok(Arc::new(Db {
            connector,
            idle: Mutex::new(vec![first]),
        }))
    }

    /// A store of its own, outside the pool (the journal's follower keeps one for the store's
    /// feed of changes).
    pub(crate) fn connect(&self) -> Result<Store, WebError> {
        Ok(self.connector.connect()?)
    }

    /// Runs `f` with a connection on a blocking thread.
    pub(crate) async fn call<T, F>(self: &Arc<Self>, f: F) -> Result<T, WebError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, WebError> + Send + 'static,
    {
        let db = Arc::clone(self);
        tokio::task::spawn_blocking(move || db.with(f))
            .await
            .map_err(|e| WebError::Internal(e.to_string()))?
    }

    /// Runs `f` with a connection on this thread.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, WebError>,
    ) -> Result<T, WebError> {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let store = match taken {
            Some(store) => store,
            None => self.connector.connect()?,
        };
        let out = f(&store);
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < KEEP_IDLE {
            idle.push(store);
        }
        out
    }
}
