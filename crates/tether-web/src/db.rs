//! The server's store connections: a small pool used from blocking threads, so a slow read
//! never stalls the async workers that serve streams.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tether_store::Store;

use crate::error::WebError;

/// Idle connections kept for reuse; more are opened under load and closed after.
const KEEP_IDLE: usize = 8;

/// Connections to one store.
pub(crate) struct Db {
    path: PathBuf,
    idle: Mutex<Vec<Store>>,
}

impl Db {
    /// Opens (creating and migrating if needed) the store at `path`.
    pub(crate) fn open(path: PathBuf) -> Result<Arc<Db>, WebError> {
        let first = Store::open(&path)?;
        Ok(Arc::new(Db {
            path,
            idle: Mutex::new(vec![first]),
        }))
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
            None => Store::open(&self.path)?,
        };
        let out = f(&store);
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < KEEP_IDLE {
            idle.push(store);
        }
        out
    }
}
