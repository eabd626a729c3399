//! Connecting: the connection pool, the schema check, and where a run lives.
//!
//! One [`PgStore`] is a small pool of connections to one database; clone it freely (clones
//! share the pool). Every operation takes a connection for its own duration only, and writes run
//! in one transaction each, so an operation either happened entirely or not at all.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::{Client, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::{Config, NoTls};

use crate::error::{PgStoreError, Result, describe};
use crate::migrations;

/// How many connections one process keeps at most.
const POOL_SIZE: usize = 8;
/// How long an operation waits for a connection (a new one, or a free one from the pool).
const POOL_WAIT: Duration = Duration::from_secs(30);

/// The team store: a pool of connections to one PostgreSQL database.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: Pool,
    pub(crate) config: Config,
    pub(crate) clock: fn() -> i64,
    /// The workspace sign-off records are about (see [`PgStore::scoped`]).
    pub(crate) scope: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &describe(&self.config))
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database `config` names and migrates its schema.
    pub async fn connect(config: Config) -> Result<PgStore> {
        PgStore::connect_with_clock(config, now_ms).await
    }

    /// [`PgStore::connect`] with timestamps from `clock` (ms since the Unix epoch), for tests.
    pub async fn connect_with_clock(config: Config, clock: fn() -> i64) -> Result<PgStore> {
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(POOL_WAIT))
            .build()
            .map_err(|err| PgStoreError::corrupt(format!("building the connection pool: {err}")))?;
        let store = PgStore {
            pool,
            config,
            clock,
            scope: String::new(),
        };
        migrations::migrate(&mut store.client().await?).await?;
        Ok(store)
    }

    /// This store with sign-off records (verdicts, approvals, running sign-offs, cancellations)
    /// kept apart for the workspace `origin` names: plans are named by their path inside their
    /// workspace, and many workspaces share a team store.
    pub fn scoped(mut self, origin: &tether_store::Origin) -> PgStore {
        self.scope = format!("{}:{}", origin.machine, origin.workspace_root.display());
        self
    }

    /// The schema version of the database.
    pub async fn schema_version(&self) -> Result<i64> {
        migrations::version(&self.client().await?).await
    }

    /// A connection from the pool.
    pub(crate) async fn client(&self) -> Result<Client> {
        use deadpool_postgres::PoolError;
        self.pool.get().await.map_err(|err| match err {
            PoolError::Backend(cause) => PgStoreError::Unreachable {
                target: describe(&self.config),
                cause,
            },
            PoolError::Timeout(_) => PgStoreError::PoolTimeout,
            other => PgStoreError::corrupt(format!("the connection pool failed: {other}")),
        })
    }

    pub(crate) fn now(&self) -> i64 {
        (self.clock)()
    }
}

/// The wall clock in milliseconds since the Unix epoch (0 if the clock is before 1970).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
