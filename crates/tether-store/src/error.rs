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
    #[error("cannot create {path:?}: {source}")]
    Io {
        /// The path that could not be created.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A JSON value could not be encoded or decoded.
    ///
    /// A bug or a damaged row; not retryable.
    #[error("JSON error in the tether store: {0}")]
    Json(#[from] serde_json::Error),

    /// Any other SQLite failure (constraint violation, I/O error, full disk, ...).
    ///
    /// Usually fatal: show the cause.
    #[error("SQLite error in the tether store: {0}")]
    Sqlite(#[source] rusqlite::Error),
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
        matches!(self, StoreError::Busy)
    }

    pub(crate) fn corrupt(detail: impl Into<String>) -> Self {
        StoreError::Corrupt {
            detail: detail.into(),
        }
    }
}
