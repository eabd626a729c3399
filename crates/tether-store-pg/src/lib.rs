//! tether's store on PostgreSQL, for team mode: runs on many machines sharing one database, so
//! one dashboard shows every run and one broker answers every question.
//!
//! The embedded store (`tether-store`, one SQLite file per workspace) stays the default; this
//! crate offers the same operations on a shared PostgreSQL database, as `async` methods of
//! [`PgStore`] named and shaped like `tether_store::Store`'s, and reusing its types ([`Event`],
//! [`RunState`] and its fold, [`Question`], [`AnswerOutcome`], `read_choice`, ...), so that both
//! can be put behind one interface.
//!
//! The same rules hold as in the embedded store:
//! - **Every state change is an event.** `events` is append-only (a trigger refuses `UPDATE`,
//!   `DELETE` and `TRUNCATE`); a run's `runs` row is the fold of its events
//!   ([`RunState::apply`]), written in the same transaction as each event.
//! - **The first answer wins**, from whichever machine: `UPDATE … WHERE status = 'pending'`.
//! - **Versioned migrations** embedded in the binary, applied under an advisory lock; a schema
//!   from a newer tether is refused ([`PgStoreError::TooNew`]).
//!
//! What team mode adds: every run records where it lives ([`Origin`]: machine, workspace root,
//! repository remote), and [`Listener`] wakes waiters on other machines through
//! `LISTEN`/`NOTIFY`, reconnecting and asking for a re-read after a lost connection.
//!
//! The caller hands over a `tokio_postgres::Config`; its password never appears in errors or
//! logs (targets are shown as host, port and database).
//!
//! # Not yet here
//! - The iteration rows' projection, verdicts, approvals, sign-offs, cancellations, message
//!   delivery and projection repair: the tables exist, the operations do not.
//! - One store interface that the loops, the broker, sign-off and the dashboard use whichever
//!   backend is there; the binary's `[store] url` (`TETHER_STORE_URL`, the password only from
//!   the environment or `~/.pgpass`); the team dashboard (`tether serve --store`); and
//!   `tether store push`, which copies a workspace's SQLite history here.
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
mod import;
mod iterations;
mod journal;
mod listen;
mod migrations;
mod questions;
mod runs;
mod signoffs;
mod store;
mod verdicts;
mod waiters;

pub use backend::TeamStore;
pub use connect::{UrlError, config_from_url, config_with, redacted};
pub use error::{PgStoreError, Result, describe};
pub use import::{Imported, RunHistory};
pub use listen::{Channel, Listener, Wake};
pub use migrations::SCHEMA_VERSION;
pub use store::{PgStore, now_ms};
pub use tether_store::Origin;
pub use tokio_postgres::Config;
