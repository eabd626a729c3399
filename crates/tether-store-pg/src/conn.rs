//! What the journal's helpers need of a connection, so one set of helpers serves both a
//! [`deadpool_postgres::Transaction`] (most writes) and a pooled client whose transaction the
//! append path begins and commits by hand, in the same exchange as its other statements.

use std::future::Future;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Error, Row, Statement};

/// Parameters of a statement.
pub(crate) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A connection inside a transaction.
pub(crate) trait Conn: Sync {
    /// A prepared statement, from this connection's cache when it was prepared before.
    fn prepare_cached<'a>(
        &'a self,
        sql: &'a str,
    ) -> impl Future<Output = Result<Statement, Error>> + Send + 'a;
    /// Runs a statement; the rows it changed.
    fn execute<'a>(
        &'a self,
        stmt: &'a Statement,
        params: Params<'a>,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a;
    /// Runs a query; its rows.
    fn query<'a>(
        &'a self,
        stmt: &'a Statement,
        params: Params<'a>,
    ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send + 'a;
    /// Runs a query; its row, if any.
    fn query_opt<'a>(
        &'a self,
        stmt: &'a Statement,
        params: Params<'a>,
    ) -> impl Future<Output = Result<Option<Row>, Error>> + Send + 'a;
    /// Runs plain SQL without parameters (`BEGIN`, `COMMIT`).
    fn batch_execute<'a>(
        &'a self,
        sql: &'a str,
    ) -> impl Future<Output = Result<(), Error>> + Send + 'a;
}

macro_rules! conn_for {
    ($type:ty) => {
        impl Conn for $type {
            fn prepare_cached<'a>(
                &'a self,
                sql: &'a str,
            ) -> impl Future<Output = Result<Statement, Error>> + Send + 'a {
                <$type>::prepare_cached(self, sql)
            }
            fn execute<'a>(
                &'a self,
                stmt: &'a Statement,
                params: Params<'a>,
            ) -> impl Future<Output = Result<u64, Error>> + Send + 'a {
                (**self).execute(stmt, params)
            }
            fn query<'a>(
                &'a self,
                stmt: &'a Statement,
                params: Params<'a>,
            ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send + 'a {
                (**self).query(stmt, params)
            }
            fn query_opt<'a>(
                &'a self,
                stmt: &'a Statement,
                params: Params<'a>,
            ) -> impl Future<Output = Result<Option<Row>, Error>> + Send + 'a {
                (**self).query_opt(stmt, params)
            }
            fn batch_execute<'a>(
                &'a self,
                sql: &'a str,
            ) -> impl Future<Output = Result<(), Error>> + Send + 'a {
                (**self).batch_execute(sql)
            }
        }
    };
}

conn_for!(deadpool_postgres::Transaction<'_>);
conn_for!(deadpool_postgres::ClientWrapper);
