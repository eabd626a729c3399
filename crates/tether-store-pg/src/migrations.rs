//! The team store's schema: numbered SQL scripts embedded in the binary, applied in order in one
//! transaction under an advisory lock, so several machines starting at once migrate once.
//!
//! Applied versions are rows of `tether_schema`; a database whose newest version is above
//! [`SCHEMA_VERSION`] was written by a newer tether and is refused ([`PgStoreError::TooNew`])
//! rather than misread.

use deadpool_postgres::Client;

use crate::error::{PgStoreError, Result};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 10;

/// The migrations, by version.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("migrations/0001_initial.sql")),
    (2, include_str!("migrations/0002_workspace_scope.sql")),
    (3, include_str!("migrations/0003_contract_terms.sql")),
    (4, include_str!("migrations/0004_run_leases.sql")),
    (5, include_str!("migrations/0005_fleets.sql")),
    (6, include_str!("migrations/0006_panel_votes.sql")),
    (7, include_str!("migrations/0007_schedules.sql")),
    (8, include_str!("migrations/0008_usage_events.sql")),
    (9, include_str!("migrations/0009_schedule_fire_tokens.sql")),
    (10, include_str!("migrations/0010_schedule_resumed.sql")),
];

/// The advisory lock key migrations hold ("tether" and 1).
const MIGRATION_LOCK: i64 = 0x7465_7468_6572_0001;

/// Brings the schema up to [`SCHEMA_VERSION`]; returns the version found before.
pub(crate) async fn migrate(client: &mut Client) -> Result<i64> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS tether_schema (\
         version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await?;
    let found: i64 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM tether_schema", &[])
        .await?
        .get(0);
    if found > SCHEMA_VERSION {
        return Err(PgStoreError::TooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO tether_schema (version) VALUES ($1)",
            &[version],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(found)
}

/// The newest applied version (0 for an empty database).
pub(crate) async fn version(client: &Client) -> Result<i64> {
    let row = client
        .query_one("SELECT COALESCE(MAX(version), 0) FROM tether_schema", &[])
        .await?;
    Ok(row.get(0))
}
