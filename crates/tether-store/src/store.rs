//! Opening the database and the connection settings every other module relies on.
//!
//! One [`Sqlite`] is one SQLite connection. Several stores (threads, processes) may open the same
//! file at once: WAL mode lets readers proceed while one writer writes, `busy_timeout` makes a
//! second writer wait instead of failing, and every write starts with `BEGIN IMMEDIATE` so two
//! writers queue up at the start of their transactions instead of deadlocking halfway through.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::{Result, StoreError};
use crate::migrations;

/// How hard a commit tries to survive power loss.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous = NORMAL`: a commit survives the process being killed at any point; a power
    /// failure or OS crash may lose the last few commits (never the database's consistency).
    /// Commits cost no fsync, which keeps per-iteration overhead well under a millisecond.
    #[default]
    Normal,
    /// `synchronous = FULL`: every commit is fsynced before it returns.
    Full,
}

/// Settings for [`crate::Store::open_with`].
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// How long a writer waits for another connection's write lock before giving up with
    /// [`StoreError::Busy`].
    pub busy_timeout: Duration,
    /// See [`Durability`].
    pub durability: Durability,
    /// Where timestamps come from (ms since the Unix epoch). Tests pass a fixed clock so
    /// snapshots are stable.
    pub clock: fn() -> i64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            busy_timeout: Duration::from_secs(5),
            durability: Durability::Normal,
            clock: now_ms,
        }
    }
}

/// Switches the database to WAL mode (a no-op when it already is).
///
/// The switch needs an exclusive lock, and SQLite reports a conflict there as busy without
/// waiting in the busy handler, which happens when several processes open a fresh file at once.
/// So the switch is retried with a short backoff until `busy_timeout` has passed.
fn enable_wal(conn: &Connection, busy_timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + busy_timeout;
    let mut backoff = Duration::from_millis(1);
    loop {
        let attempt = conn
            .pragma_query_value(None, "journal_mode", |row| row.get::<_, String>(0))
            .and_then(|mode| {
                if mode.eq_ignore_ascii_case("wal") {
                    Ok(mode)
                } else {
                    conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
                }
            })
            .map_err(StoreError::from);
        match attempt {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(StoreError::corrupt(format!(
                    "could not switch the database to WAL mode (it reports `{mode}`)"
                )));
            }
            Err(StoreError::Busy) if Instant::now() < deadline => {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_millis(50));
            }
            Err(err) => return Err(err),
        }
    }
}

/// The wall clock in milliseconds since the Unix epoch (0 if the clock is before 1970).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The embedded backend: one SQLite connection. Its operations are offered through
/// [`crate::Store`] and [`crate::StoreBackend`].
#[derive(Debug)]
pub(crate) struct Sqlite {
    pub(crate) conn: Connection,
    pub(crate) clock: fn() -> i64,
}

impl Sqlite {
    /// Opens (creating if needed) the store at `path`, usually `<workspace>/.tether/tether.db`,
    /// creating its parent directories and migrating its schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Sqlite> {
        Sqlite::open_with(path, &StoreOptions::default())
    }

    /// [`Store::open`] with explicit settings.
    pub fn open_with(path: impl AsRef<Path>, options: &StoreOptions) -> Result<Sqlite> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|cause| StoreError::Io {
                path: parent.to_path_buf(),
                cause,
            })?;
        }
        let conn = Connection::open(path).map_err(|e| StoreError::from(e).opening(path))?;
        Sqlite::configure(conn, options, true).map_err(|e| e.opening(path))
    }

    /// A private in-memory store, for tests.
    pub fn open_in_memory() -> Result<Sqlite> {
        Sqlite::open_in_memory_with(&StoreOptions::default())
    }

    /// [`Store::open_in_memory`] with explicit settings (e.g. a fixed clock).
    pub fn open_in_memory_with(options: &StoreOptions) -> Result<Sqlite> {
        Sqlite::configure(Connection::open_in_memory()?, options, false)
    }

    fn configure(mut conn: Connection, options: &StoreOptions, wal: bool) -> Result<Sqlite> {
        conn.busy_timeout(options.busy_timeout)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        if wal {
            enable_wal(&conn, options.busy_timeout)?;
        }
        let synchronous = match options.durability {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        };
        conn.pragma_update(None, "synchronous", synchronous)?;
        migrations::migrate(&mut conn)?;
        Ok(Sqlite {
            conn,
            clock: options.clock,
        })
    }

    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |row| row.get(0))?)
    }

    pub fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .pragma_query_value(None, "data_version", |row| row.get(0))?)
    }

    pub fn check_integrity(&self) -> Result<()> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let problems = stmt
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if problems.len() == 1 && problems[0] == "ok" {
            Ok(())
        } else {
            Err(StoreError::corrupt(problems.join("; ")))
        }
    }

    /// Starts a write transaction that takes the write lock up front (`BEGIN IMMEDIATE`).
    pub(crate) fn write(&self) -> Result<Transaction<'_>> {
        Ok(Transaction::new_unchecked(
            &self.conn,
            TransactionBehavior::Immediate,
        )?)
    }

    /// Starts a read transaction, so several queries see one snapshot.
    pub(crate) fn read(&self) -> Result<Transaction<'_>> {
        Ok(Transaction::new_unchecked(
            &self.conn,
            TransactionBehavior::Deferred,
        )?)
    }

    pub(crate) fn now(&self) -> i64 {
        (self.clock)()
    }
}
