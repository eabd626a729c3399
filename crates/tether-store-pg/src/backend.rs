//! The team store behind tether's one store interface: [`TeamStore`] implements
//! `tether_store::StoreBackend`, so the loops, the broker, sign-off and the dashboard use it
//! exactly as they use a workspace's SQLite file.
//!
//! That interface is synchronous (SQLite's calls are, and every caller is written against it),
//! while PostgreSQL's client is asynchronous. So a [`TeamStore`] owns a small runtime of its own
//! (one worker thread, shared by every clone): each call enters that runtime and waits for its
//! operation on the calling thread, the way a SQLite call waits for the disk. The connection
//! pool and its connections live on that runtime, so a call made from inside another runtime
//! (a loop's task) or from a plain thread (a CLI command) works the same, and none can starve
//! the other.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tether_store::{
    BackendKind, Change, Connector, Following, OnChange, Origin, Store, StoreBackend, StoreError,
};
use tokio::runtime::Runtime;
use tokio_postgres::Config;

use crate::error::{PgStoreError, describe};
use crate::listen::{Channel as ListenChannel, Listener, Wake};
use crate::store::PgStore;

/// A connection pool to a team store and the runtime it lives on; cheap to clone, and every
/// clone shares both. Open [`Store`]s of it with [`Connector::connect`]; [`Store::follow`] on
/// them listens for changes from every machine.
#[derive(Clone)]
pub struct TeamStore {
    store: PgStore,
    runtime: Arc<OwnRuntime>,
}

/// The runtime the pool lives on. Shut down without waiting when the last store drops, which
/// may happen inside another runtime (where a blocking shutdown is not allowed).
struct OwnRuntime(Option<Runtime>);

impl OwnRuntime {
    fn get(&self) -> &Runtime {
        match &self.0 {
            Some(runtime) => runtime,
            // Only `drop` takes it.
            None => unreachable!("the team store's runtime is gone while in use"),
        }
    }
}

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl std::fmt::Debug for TeamStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamStore")
            .field("target", &describe(&self.store.config))
            .finish_non_exhaustive()
    }
}

impl TeamStore {
    /// Connects to the database `config` names and migrates its schema (from any thread, in or
    /// out of a runtime).
    pub fn connect(config: Config) -> Result<TeamStore, PgStoreError> {
        TeamStore::connect_with_clock(config, crate::now_ms)
    }

    /// [`TeamStore::connect`] with timestamps from `clock`, for tests.
    pub fn connect_with_clock(
        config: Config,
        clock: fn() -> i64,
    ) -> Result<TeamStore, PgStoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tether-team-store")
            .enable_all()
            .build()
            .map_err(|err| PgStoreError::corrupt(format!("starting the store's runtime: {err}")))?;
        let store = wait_on(&runtime, PgStore::connect_with_clock(config, clock))?;
        Ok(TeamStore {
            store,
            runtime: Arc::new(OwnRuntime(Some(runtime))),
        })
    }

    /// This store with sign-off records kept apart for the workspace `origin` names (see
    /// [`PgStore::scoped`]); it shares the connection pool.
    pub fn scoped(&self, origin: &Origin) -> TeamStore {
        TeamStore {
            store: self.store.clone().scoped(origin),
            runtime: Arc::clone(&self.runtime),
        }
    }

    /// The async store, for what the sync interface does not offer (listening, imports).
    pub fn pg(&self) -> &PgStore {
        &self.store
    }

    /// Runs `operation` on the store's runtime and waits for it here.
    pub fn block<T>(
        &self,
        operation: impl Future<Output = Result<T, PgStoreError>>,
    ) -> Result<T, StoreError> {
        wait_on(self.runtime.get(), operation).map_err(StoreError::from)
    }

    /// Follows every change committed by anyone (`LISTEN`), on the store's runtime: calls
    /// `on_change` for each, and [`Change::Resync`] once listening starts and after every
    /// reconnection. Keeps trying to connect until the guard drops.
    fn follow_changes(&self, on_change: OnChange) -> Following {
        let config = self.store.config.clone();
        let task = self.runtime.get().spawn(async move {
            let mut pause = FOLLOW_RETRY_FIRST;
            let mut listener = loop {
                match Listener::start(config.clone(), &ListenChannel::ALL).await {
                    Ok(listener) => break listener,
                    Err(e) => {
                        tracing::warn!(error = %e, "team store: cannot listen for changes yet");
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(FOLLOW_RETRY_MAX);
                    }
                }
            };
            on_change(Change::Resync);
            while let Some(wake) = listener.next().await {
                if let Some(change) = change_of(wake) {
                    on_change(change);
                }
            }
        });
        Following(Box::new(AbortOnDrop(task)))
    }
}

/// The first and longest pause before trying to listen again.
const FOLLOW_RETRY_FIRST: Duration = Duration::from_millis(100);
const FOLLOW_RETRY_MAX: Duration = Duration::from_secs(2);

/// Stops a feed's task when its guard drops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a notification says, in the store interface's words (`None`: a payload that names no
/// valid id, which only a foreign writer could send).
fn change_of(wake: Wake) -> Option<Change> {
    match wake {
        Wake::Resync => Some(Change::Resync),
        Wake::Notified { channel, payload } => match channel {
            ListenChannel::Answers => payload.parse().ok().map(Change::Question),
            ListenChannel::Control => payload.parse().ok().map(Change::Control),
            ListenChannel::Events if payload.is_empty() => Some(Change::Events(None)),
            ListenChannel::Events => payload.parse().ok().map(|id| Change::Events(Some(id))),
        },
    }
}

/// Polls `future` on this thread inside `runtime`'s context, so what it spawns (connections)
/// and its timers belong to that runtime, whose worker drives them meanwhile.
fn wait_on<F: Future>(runtime: &Runtime, future: F) -> F::Output {
    let _entered = runtime.enter();
    futures_executor::block_on(future)
}

impl Connector for TeamStore {
    fn connect(&self) -> tether_store::Result<Store> {
        Ok(Store::from_backend(Box::new(self.clone())))
    }

    fn describe(&self) -> String {
        format!("the team store at {}", describe(&self.store.config))
    }
}

impl From<PgStoreError> for StoreError {
    fn from(err: PgStoreError) -> StoreError {
        let detail = crate::error::chain(&err);
        match err {
            PgStoreError::Unreachable { .. }
            | PgStoreError::ConnectionLost(_)
            | PgStoreError::PoolTimeout => StoreError::Unavailable { detail },
            PgStoreError::Refused(_) => StoreError::Refused { detail },
            PgStoreError::TooNew { found, supported } => StoreError::TooNew { found, supported },
            PgStoreError::NotFound { what, id } => StoreError::NotFound { what, id },
            PgStoreError::Corrupt(detail) => StoreError::Corrupt { detail },
            PgStoreError::NonUtf8Path { path } => StoreError::NonUtf8Path { path },
            PgStoreError::LeaseLost { run, token, lapse } => {
                StoreError::LeaseLost { run, token, lapse }
            }
        }
    }
}

/// Implements every operation of the store interface by waiting on [`PgStore`]'s async method
/// of the same name.
macro_rules! delegate_to_pg {
    ($( $(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        impl StoreBackend for TeamStore {
            fn kind(&self) -> BackendKind {
                BackendKind::Team
            }
            fn follow(&self, on_change: OnChange) -> Option<Following> {
                Some(self.follow_changes(on_change))
            }
            $( fn $name(&self $(, $arg: $ty)*) -> $ret {
                self.block(self.store.$name($($arg),*))
            } )*
        }
    };
}

tether_store::with_store_operations!(delegate_to_pg);
