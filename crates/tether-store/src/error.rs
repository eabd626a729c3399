//! The store's error type.
//!
//! Each variant says what the caller can do about it: retry ([`StoreError::Busy`]), tell the user
//! to upgrade ([`StoreError::TooNew`]), report a bad id ([`StoreError::NotFound`]), or give up and
//! show the cause. SQLite's own busy and corruption codes are sorted into those variants here, so
//! callers never match on SQLite error codes themselves.

use std::path::PathBuf;

use rusqlite::ErrorCode;

/// Result alias used throughout the store.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Everything that can go wrong when talking to the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another connection held the write lock for longer than the busy timeout.
    ///
    /// Transient: retry the operation later. Nothing was written.
    #[error("the tether store is busy (another tether process is writing); retry shortly")]
    Busy,

    /// The database was written by a newer tether whose schema this binary does not know.
    ///
    /// Fatal for this binary: upgrade tether. The database was not modified.
    #[error(
        "the tether store has schema version {found}, but this tether only knows up to \
         version {supported}; upgrade tether to open it"
    )]
    TooNew {
        /// The `user_version` found in the database file.
        found: i64,
        /// The newest schema version this binary can migrate to.
        supported: i64,
    },

    /// The thing the caller named does not exist.
    ///
    /// Report it to the user (usually a mistyped id); retrying will not help.
    #[error("no {what} with id `{id}`")]
    NotFound {
        /// What kind of thing was looked up (`"run"`, `"question"`).
        what: &'static str,
        /// The id the caller gave.
        id: String,
    },

    /// The database file or a row in it is damaged, or was written by a newer tether in a way
    /// this binary cannot read.
    ///
    /// Fatal: show the detail; the user may need to restore or move `.tether/tether.db` aside.
    #[error("the tether store is corrupt or unreadable: {detail}")]
    Corrupt {
        /// What was wrong.
        detail: String,
    },

    /// A path handed to the store cannot be stored as text (it is not valid UTF-8).
    ///
    /// Fatal for this call: use a UTF-8 path.
    #[error("path {path:?} is not valid UTF-8 and cannot be recorded in the store")]
    NonUtf8Path {
        /// The offending path.
        path: PathBuf,
    },

    /// Creating the store's directory failed.
    ///
    /// Fatal: show the path and cause (permissions, read-only file system).
    #[error("cannot create {path:?}: {cause}")]
    Io {
        /// The path that could not be created.
        path: PathBuf,
        /// The underlying I/O error (in the message, so not also a `source`).
        cause: std::io::Error,
    },

    /// The database file, or the directory it is in, cannot be opened for writing (read-only
    /// permissions or file system). tether writes to its store even to read it (the journal's
    /// write-ahead log), so every command that opens the store needs write access.
    ///
    /// Fatal: the person fixes the permissions.
    #[error(
        "cannot write to the tether store {} ({detail}); tether needs write access to {} and \
         the files in it even to read them: make them writable (e.g. `chmod -R u+w {}`)",
        path.display(),
        dir(path).display(),
        dir(path).display()
    )]
    NotWritable {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },

    /// A JSON value could not be encoded or decoded.
    ///
    /// A bug or a damaged row; not retryable.
    #[error("JSON error in the tether store: {0}")]
    Json(serde_json::Error),

    /// The team store (a shared database) could not be reached, or the connection was lost.
    ///
    /// Transient: retry later (a write either committed entirely or not at all). The detail
    /// names the server by host, port and database, never with its password.
    #[error("the team store is unavailable: {detail}")]
    Unavailable {
        /// What went wrong, and where.
        detail: String,
    },

    /// The team store refused the operation (a constraint, a trigger, a permission).
    ///
    /// Fatal for this operation: show the detail (a permission may need granting).
    #[error("the team store refused the operation: {detail}")]
    Refused {
        /// What the database said.
        detail: String,
    },

    /// The caller's lease on the run no longer holds (its fencing token is stale, or the lease
    /// lapsed or was released): nothing was written.
    ///
    /// Fatal for the caller as the run's driver: stop driving it (another process may have
    /// taken it up); claim it again to go on.
    #[error("run {run} is no longer driven by this process (lease token {token}): {lapse}")]
    LeaseLost {
        /// The run.
        run: String,
        /// The token the caller presented.
        token: i64,
        /// Why it no longer holds.
        lapse: crate::leases::Lapse,
    },

    /// Any other SQLite failure (constraint violation, I/O error, full disk, ...).
    ///
    /// Usually fatal: show the cause. (The cause is in the message, so it is not also a
    /// `source`: an error chain prints it once.)
    #[error("SQLite error in the tether store: {0}")]
    Sqlite(rusqlite::Error),
}

/// The directory holding `path`.
fn dir(path: &std::path::Path) -> &std::path::Path {
    path.parent().unwrap_or(path)
}

impl From<serde_json::Error> for StoreError {
    fn from(err: serde_json::Error) -> Self {
        StoreError::Json(err)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(err: rusqlite::Error) -> Self {
        match err.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy,
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
                detail: err.to_string(),
            },
            _ => StoreError::Sqlite(err),
        }
    }
}

impl StoreError {
    /// Whether retrying the same operation later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Busy | StoreError::Unavailable { .. })
    }

    /// This error met while opening the store at `path`: a read-only database or directory is
    /// reported as [`StoreError::NotWritable`], naming the file.
    pub(crate) fn opening(self, path: &std::path::Path) -> Self {
        match &self {
            StoreError::Sqlite(err)
                if matches!(
                    err.sqlite_error_code(),
                    Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen)
                ) =>
            {
                StoreError::NotWritable {
                    path: path.to_path_buf(),
                    detail: sqlite_message(err),
                }
            }
            _ => self,
        }
    }

    pub(crate) fn corrupt(detail: impl Into<String>) -> Self {
        StoreError::Corrupt {
            detail: detail.into(),
        }
    }
}

/// SQLite's own words for `err`, without rusqlite's wrapping.
fn sqlite_message(err: &rusqlite::Error) -> String {
    match err {
        rusqlite::Error::SqliteFailure(e, Some(msg)) if msg.is_empty() => e.to_string(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use rusqlite::{Connection, OpenFlags};

    use super::*;

    /// A real SQLite "read-only" error (tests may run as root, for whom permissions do not
    /// stop a write, so the database is opened read-only instead).
    fn read_only_error(path: &std::path::Path) -> StoreError {
        crate::Store::open(path).unwrap();
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        StoreError::from(conn.execute("PRAGMA user_version = 9", []).unwrap_err())
    }

    #[test]
    fn a_read_only_store_names_the_file_and_what_to_do_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".tether/tether.db");
        let err = read_only_error(&path).opening(&path);
        let message = err.to_string();
        assert!(matches!(err, StoreError::NotWritable { .. }), "{err:?}");
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("chmod -R u+w"), "{message}");
        assert_eq!(message.matches("readonly database").count(), 1, "{message}");
        assert!(err.source().is_none());
    }

    #[test]
    fn a_cause_in_the_message_is_not_also_a_source() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = read_only_error(&dir.path().join("t.db"));
        assert!(matches!(sqlite, StoreError::Sqlite(_)));
        let io = StoreError::Io {
            path: dir.path().into(),
            cause: std::io::Error::other("disk on fire"),
        };
        let json = StoreError::from(serde_json::from_str::<u8>("x").unwrap_err());
        for err in [sqlite, io, json] {
            assert!(err.source().is_none(), "{err}");
        }
    }
}
