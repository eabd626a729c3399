//! tether's store on PostgreSQL, for team mode: runs on many machines sharing one database, so
//! one dashboard shows every run and one broker answers every question.
//!
//! The embedded store (`tether-store`, one SQLite file per workspace) stays the default. This
//! crate keeps the same records in a shared PostgreSQL database: [`PgStore`] offers every
//! operation of the store interface as an `async` method of the same name, reusing its types
//! ([`Event`], [`RunState`] and its fold, [`Question`], [`AnswerOutcome`], `read_choice`, ...),
//! and [`TeamStore`] puts it behind that interface (`tether_store::StoreBackend`), so the loops,
//! the broker, sign-off and the dashboard use it without knowing.
//!
//! The same rules hold as in the embedded store:
//! - **Every state change is an event.** `events` is append-only (a trigger refuses `UPDATE`,
//!   `DELETE` and `TRUNCATE`); a run's `runs` and `iterations` rows are the fold of its events
//!   ([`RunState::apply`]), written in the same transaction as each event.
//! - **The first answer wins**, from whichever machine: `UPDATE … WHERE status = 'pending'`.
//! - **Versioned migrations** embedded in the binary, applied under an advisory lock; a schema
//!   from a newer tether is refused ([`PgStoreError::TooNew`]).
//!
//! What team mode adds: every run records where it lives ([`Origin`]: machine, workspace root,
//! repository remote); sign-off records are kept per workspace ([`PgStore::scoped`]);
//! [`Listener`] wakes waiters on other machines through `LISTEN`/`NOTIFY`, reconnecting and
//! asking for a re-read after a lost connection (the feed behind `Store::follow`); appends of
//! different runs run in parallel while a reader of the whole journal still misses nothing
//! (`journal.rs`); and a workspace's history can be imported with its ids and times
//! ([`RunHistory`], `tether store push`).
//!
//! The caller hands over a `tokio_postgres::Config` ([`config_from_url`] builds one, with the
//! password from `PGPASSWORD` or the password file); the password never appears in errors or
//! logs (targets are shown as host, port and database).
//!
//! [`Event`]: tether_store::Event
//! [`RunState`]: tether_store::RunState
//! [`RunState::apply`]: tether_store::RunState::apply
//! [`Question`]: tether_store::Question
//! [`AnswerOutcome`]: tether_store::AnswerOutcome

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(missing_docs)]

mod backend;
mod conn;
mod connect;
mod error;
mod fleet_claims;
mod fleets;
mod import;
mod iterations;
mod journal;
mod leases;
mod listen;
mod migrations;
mod questions;
mod runs;
mod schedules;
mod signoffs;
mod store;
mod verdicts;
mod waiters;

pub use backend::TeamStore;
pub use connect::{UrlError, config_from_url, config_with, redacted};
pub use error::{PgStoreError, Result, describe};
pub use import::{Imported, RunHistory};
pub use journal::usage_events_sql;
pub use listen::{Channel, Listener, Wake};
pub use migrations::SCHEMA_VERSION;
pub use store::{PgStore, now_ms};
pub use tether_store::Origin;
pub use tokio_postgres::Config;
