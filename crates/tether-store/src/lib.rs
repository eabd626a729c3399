//! tether's store: everything tether must not forget, behind one interface ([`Store`], over a
//! [`StoreBackend`]; see `facade.rs`). This crate is that interface and its embedded backend,
//! one SQLite file per workspace (`<workspace>/.tether/tether.db`); a team's shared PostgreSQL
//! database is another backend (crate `tether-store-pg`). What follows describes the embedded
//! one; every backend keeps the same rules.
//!
//! # Why it looks like this
//!
//! tether runs agents unattended for hours, is killed and resumed, and is read by several
//! processes at once (the loop, `tether answer` from another shell, the dashboard, `tether mcp`).
//! So the store is built around three rules:
//!
//! 1. **Every state change is an event.** The `events` table is an append-only journal (SQL
//!    triggers refuse `UPDATE` and `DELETE`). A run's state is a pure fold over its events
//!    ([`RunState::apply`]); the `runs` and `iterations` rows are projections of that fold,
//!    written in the same transaction as the event, and [`Store::rebuild_run_state`] can always
//!    recompute them from the journal. A commit that returned is never lost, even to `kill -9`.
//! 2. **Concurrent processes serialise, never deadlock.** WAL mode lets readers run alongside
//!    the writer; every write begins with `BEGIN IMMEDIATE`, so writers queue for the lock up
//!    front (waiting up to the busy timeout, then [`StoreError::Busy`]) and a transaction's reads
//!    are never stale. [`Store::data_version`] tells a poller cheaply that someone else wrote.
//! 3. **No secrets.** Nothing in this API takes a key or token; run specs and event payloads are
//!    for parameters and prose only.
//!
//! # Schema (version [`SCHEMA_VERSION`])
//!
//! | table | holds | key |
//! | --- | --- | --- |
//! | `runs` | a run's kind, workspace, spec (JSON) and projected status/iteration/state | `id` (`r-…`) |
//! | `events` | the journal: `run_id` (nullable), `at_ms`, `kind`, `payload` (the [`Event`] JSON) | `seq` (autoincrement) |
//! | `iterations` | per iteration: start, end, outcome, summary (projection) | `(run_id, n)` |
//! | `questions` | questions to a human, the choices offered, and the first answer (with the choice it made) | `id` (`q-…`) |
//! | `question_posts` | where each question was posted, so it is never re-posted | `(question_id, channel)` |
//! | `topic_counters` | the per-stream `Agent Q #<n>` counter | `stream` |
//! | `verdicts` | every sign-off decision with its kind, checks, missing, judge and transcript | `id` |
//! | `contract_approvals` | approval history of goal contracts, with the terms that bound the agent; newest per goal in force | `id` |
//! | `signoffs_running` | the one sign-off in progress per goal, and its attempt number | `(plan_path, goal_id)` |
//! | `cancellations` | who cancelled a goal (a person, or the agent awaiting a person) | `id` |
//! | `run_leases` | who drives a run (machine, pid, workspace), until when, and its fencing token (see `leases.rs`) | `run_id` |
//!
//! The schema ships in the binary as numbered SQL scripts (`src/migrations/`), applied in order
//! and tracked with `PRAGMA user_version`; a database from a newer tether is refused with
//! [`StoreError::TooNew`] rather than misread.
//!
//! Which process drives a run is told by an `flock` on its lock file ([`run_lock`]); what other
//! processes ask of a run — pause, cancel, a message for its agent — are events appended here
//! ([`control`]), shared by the CLI and the dashboard. Starting and resuming runs from the
//! dashboard are requests too, answered by the process that drives them rather than recorded:
//! [`launch`] names them and the [`launch::Launcher`] that answers, so the dashboard and the
//! runtime meet here and neither depends on the other.
//!
//! A process that records events from several tasks shares one connection through a
//! [`Journal`], which also hands every committed event to its sinks (the progress line,
//! `--events jsonl`).
//!
//! # Example
//!
//! ```
//! use tether_store::{Event, RunKind, RunStatus, Store};
//!
//! let store = Store::open_in_memory()?;
//! let run = store.create_run(RunKind::Ralph, "/work".as_ref(), &serde_json::json!({
//!     "prompt": "make the tests pass",
//!     "max_iterations": 20,
//! }))?;
//! store.append(Some(&run), &Event::IterationStarted { n: 1 })?;
//! store.append(Some(&run), &Event::IterationCompleted { n: 1, summary: "fixed one".into() })?;
//!
//! let state = store.run(&run)?.state;
//! assert_eq!((state.status, state.iteration), (RunStatus::Running, 1));
//! assert_eq!(state, store.rebuild_run_state(&run)?);
//! # Ok::<(), tether_store::StoreError>(())
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![deny(missing_docs)]

mod approvals;
pub mod control;
mod error;
mod event;
mod facade;
mod fleet_claims;
mod fleets;
mod ids;
mod iterations;
mod journal;
pub mod launch;
mod leases;
mod migrations;
mod origin;
mod questions;
mod row;
pub mod run_lock;
mod runs;
mod schedules;
mod shared;
mod signoffs;
mod state;
mod store;
mod topics;
mod verdicts;
mod vocab;
mod waiters;

pub use approvals::{Approval, ContractTerms};
pub use error::{Result, StoreError};
pub use event::{Event, StoredEvent, USAGE_KINDS, usage_kinds_sql};
pub use facade::{
    BackendKind, Change, Connector, EmbeddedFile, Following, OnChange, Store, StoreBackend,
};
pub use fleet_claims::{GoalClaim, goal_lapse, settles};
pub use fleets::{Fleet, FleetGoal, GoalLease, GoalState, NewFleet, budget_text};
pub use ids::{ParseIdError, QuestionId, RunId, Seq};
pub use iterations::{Iteration, IterationWrite, apply_write, writes_for};
pub use journal::Delivery;
pub use leases::{Claim, Holder, Lapse, Lease};
pub use migrations::SCHEMA_VERSION;
pub use origin::{MACHINE_VAR, Origin, this_machine};
pub use questions::{AnswerOutcome, NewQuestion, Question, QuestionPost, read_choice};
pub use runs::{Run, RunFilter};
pub use schedules::{
    FireClaim, FireEnd, FireEnded, NewSchedule, SCHEDULE_COLUMNS, Schedule, count_failure,
    fire_lapse, fire_name,
};
pub use shared::{EventSink, Journal, RunCell};
pub use signoffs::{Cancellation, NewCancellation, Reservation, RunningSignoff};
pub use state::{
    GoalUsage, QueuedMessage, RunState, SpentBudget, Usage, UsageLimitWait, utc_clock,
};
pub use store::{Durability, StoreOptions, now_ms};
pub use tether_budget::{Budget, Overrun, Spending, Unit, first_spent};
pub use verdicts::{JudgeVote, NewVerdict, VerdictRecord};
pub use vocab::{
    Author, IterationOutcome, JudgeRole, Outcome, QuestionStatus, Rule, RunKind, RunStatus,
    UnknownValue, Verdict, VerdictKind,
};
pub use waiters::{Abandoned, PendingQuestion};
