//! Embedded, versioned schema migrations.
//!
//! The schema ships inside the binary as an ordered list of SQL scripts, and the database
//! records how far it has got in `PRAGMA user_version`. Each script runs in its own
//! `BEGIN IMMEDIATE` transaction together with the version bump, so a crash mid-migration leaves
//! the previous version intact, and two processes opening a fresh file at once do not both
//! migrate it (the second re-reads the version under the write lock and finds the work done).
//! A database from a newer tether is refused rather than guessed at.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Result, StoreError};

/// One schema step.
pub(crate) struct Migration {
    /// The `user_version` after this step; steps are numbered 1, 2, 3, ...
    pub(crate) version: i64,
    /// The file's name, for messages.
    pub(crate) name: &'static str,
    /// The script.
    pub(crate) sql: &'static str,
}

/// Every migration, in order. Append only: never edit a script that has shipped.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_initial.sql",
        sql: include_str!("migrations/0001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "0002_verdict_kind.sql",
        sql: include_str!("migrations/0002_verdict_kind.sql"),
    },
    Migration {
        version: 3,
        name: "0003_one_signoff_at_a_time.sql",
        sql: include_str!("migrations/0003_one_signoff_at_a_time.sql"),
    },
    Migration {
        version: 4,
        name: "0004_question_options.sql",
        sql: include_str!("migrations/0004_question_options.sql"),
    },
    Migration {
        version: 5,
        name: "0005_run_origin.sql",
        sql: include_str!("migrations/0005_run_origin.sql"),
    },
    Migration {
        version: 6,
        name: "0006_contract_terms.sql",
        sql: include_str!("migrations/0006_contract_terms.sql"),
    },
    Migration {
        version: 7,
        name: "0007_run_leases.sql",
        sql: include_str!("migrations/0007_run_leases.sql"),
    },
    Migration {
        version: 8,
        name: "0008_fleets.sql",
        sql: include_str!("migrations/0008_fleets.sql"),
    },
    Migration {
        version: 9,
        name: "0009_panel_votes.sql",
        sql: include_str!("migrations/0009_panel_votes.sql"),
    },
    Migration {
        version: 10,
        name: "0010_schedules.sql",
        sql: include_str!("migrations/0010_schedules.sql"),
    },
    Migration {
        version: 11,
        name: "0011_usage_events.sql",
        sql: include_str!("migrations/0011_usage_events.sql"),
    },
    Migration {
        version: 12,
        name: "0012_schedule_fire_tokens.sql",
        sql: include_str!("migrations/0012_schedule_fire_tokens.sql"),
    },
    Migration {
        version: 13,
        name: "0013_schedule_resumed.sql",
        sql: include_str!("migrations/0013_schedule_resumed.sql"),
    },
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: i64 = 13;

fn user_version(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
}

/// Brings `conn`'s database up to [`SCHEMA_VERSION`], or refuses one that is newer.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let found = user_version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = user_version(&tx)?;
        if current > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                found: current,
                supported: SCHEMA_VERSION,
            });
        }
        if current >= migration.version {
            // Another process got here first.
            continue;
        }
        tx.execute_batch(migration.sql)
            .map_err(|err| match StoreError::from(err) {
                StoreError::Sqlite(err) => {
                    StoreError::corrupt(format!("migration {} failed: {err}", migration.name))
                }
                other => other,
            })?;
        tx.pragma_update(None, "user_version", migration.version)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "migrations_tests.rs"]
mod tests;
