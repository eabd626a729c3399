//! What can go wrong talking to the team store, as what the caller can do about it.
//!
//! No variant carries the connection's password: targets are described by host, port and
//! database only ([`describe`]), and driver errors never include the configuration.

use tokio_postgres::Config;

/// Results of the team store.
pub type Result<T, E = PgStoreError> = std::result::Result<T, E>;

/// An operation on the team store failed.
#[derive(Debug, thiserror::Error)]
pub enum PgStoreError {
    /// The server could not be reached or refused the login: check that it runs, the URL's
    /// host, port, user and database, and the password in the environment or `~/.pgpass`.
    #[error("cannot reach the team store at {target}: {cause}")]
    Unreachable {
        /// Host, port and database (never the password).
        target: String,
        /// What the driver said.
        #[source]
        cause: tokio_postgres::Error,
    },
    /// The connection was lost mid-operation; the operation may be retried (a write either
    /// committed entirely or not at all).
    #[error("the connection to the team store was lost: {0}")]
    ConnectionLost(#[source] tokio_postgres::Error),
    /// Waiting for a free connection from the pool took too long; retry later, or lower the
    /// number of concurrent operations.
    #[error("no connection to the team store became free in time")]
    PoolTimeout,
    /// The database refused the statement (a constraint, a trigger, a permission).
    #[error("the team store refused the operation: {0}")]
    Refused(#[source] tokio_postgres::Error),
    /// The database's schema is newer than this tether understands: upgrade tether.
    #[error(
        "the team store's schema is version {found}, newer than this tether's {supported}; \
         upgrade tether"
    )]
    TooNew {
        /// The database's version.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// The caller's lease on the run no longer holds: nothing was written. Stop driving the run.
    #[error("run {run} is no longer driven by this process (lease token {token}): {lapse}")]
    LeaseLost {
        /// The run.
        run: String,
        /// The token presented.
        token: i64,
        /// Why it no longer holds.
        lapse: tether_store::Lapse,
    },
    /// No such row.
    #[error("no {what} `{id}` in the team store")]
    NotFound {
        /// What was looked for (`run`, `question`, ...).
        what: &'static str,
        /// Its id.
        id: String,
    },
    /// A row holds something this build cannot read.
    #[error("the team store holds data this tether cannot read: {0}")]
    Corrupt(String),
    /// A workspace path is not UTF-8, which the store cannot hold.
    #[error("the path `{}` is not UTF-8", path.display())]
    NonUtf8Path {
        /// The path.
        path: std::path::PathBuf,
    },
}

impl PgStoreError {
    pub(crate) fn corrupt(what: impl Into<String>) -> PgStoreError {
        PgStoreError::Corrupt(what.into())
    }
}

impl From<tokio_postgres::Error> for PgStoreError {
    /// A statement the database refused is [`PgStoreError::Refused`]; a connection that ended —
    /// before an answer, or with the server saying it ends it (a restart's
    /// `terminating connection due to administrator command`, SQLSTATE class 57 "operator
    /// intervention", or class 08 "connection exception") — is
    /// [`PgStoreError::ConnectionLost`], which the caller may retry on a new connection.
    fn from(err: tokio_postgres::Error) -> Self {
        let ended = err
            .code()
            .is_some_and(|code| matches!(code.code().get(..2), Some("57" | "08")));
        if err.as_db_error().is_some() && !ended {
            PgStoreError::Refused(err)
        } else {
            PgStoreError::ConnectionLost(err)
        }
    }
}

impl From<serde_json::Error> for PgStoreError {
    fn from(err: serde_json::Error) -> Self {
        PgStoreError::Corrupt(format!("JSON: {err}"))
    }
}

/// `host:port/dbname` for every host of `config`: enough to tell the user where, never the
/// password.
pub fn describe(config: &Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let host = match host {
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            };
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            format!("{host}:{port}")
        })
        .collect();
    format!(
        "{}/{}",
        hosts.join(","),
        config.get_dbname().unwrap_or("(default database)")
    )
}

/// `err` and its causes as one line, each cause said once (the driver's "db error" is followed
/// by what the database said).
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        let said = next.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = next.source();
    }
    text
}
