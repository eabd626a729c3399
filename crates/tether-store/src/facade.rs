//! The one store interface: [`Store`], over a [`StoreBackend`].
//!
//! Everything that reads or writes tether's records — the loops, the broker, sign-off, the
//! dashboard, the CLI — holds a [`Store`] and never learns which backend is behind it: the
//! embedded SQLite file of a workspace (the default, this crate), or a shared database for team
//! mode (another crate implements [`StoreBackend`] and hands it to [`Store::from_backend`]).
//!
//! The operations are listed once, below; the list generates the trait, the SQLite backend's
//! implementation of it and [`Store`]'s methods, so the three cannot drift apart. Every backend
//! keeps the same rules: every state change is an event in an append-only journal, projections
//! are written in the same transaction as their event, and the first answer to a question wins.

use std::path::Path;

use crate::error::Result;
use crate::ids::{QuestionId, RunId};
use crate::store::{Sqlite, StoreOptions};

/// Opens stores of one place: the workspace's file, or a team's database. A process that opens
/// many stores (the dashboard, per request) keeps one and calls it; a team connector shares one
/// connection pool among all the stores it opens.
pub trait Connector: Send + Sync + std::fmt::Debug {
    /// A store of this place.
    fn connect(&self) -> Result<Store>;
    /// Where it is, for messages: a file's path, or a database's host, port and name (never a
    /// password).
    fn describe(&self) -> String;
}

/// The embedded store in the SQLite file at this path.
#[derive(Debug, Clone)]
pub struct EmbeddedFile(pub std::path::PathBuf);

impl Connector for EmbeddedFile {
    fn connect(&self) -> Result<Store> {
        Store::open(&self.0)
    }

    fn describe(&self) -> String {
        self.0.display().to_string()
    }
}

/// What another process, maybe on another machine, committed: told to [`Store::follow`]'s
/// callback. Only a poke — the store stays the truth, so a receiver re-reads what it cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// This question was answered, withdrawn or abandoned.
    Question(QuestionId),
    /// This run was asked to pause or cancel, or given a message.
    Control(RunId),
    /// Events were appended for this run (`None`: events of no run).
    Events(Option<RunId>),
    /// The feed was (re)connected and may have missed changes meanwhile: re-read everything.
    Resync,
}

/// The callback [`Store::follow`] calls for every [`Change`], from a thread of its own.
pub type OnChange = Box<dyn Fn(Change) + Send + Sync>;

/// Keeps a feed of changes going; dropping it stops the feed.
pub struct Following(pub Box<dyn Send + Sync>);

impl std::fmt::Debug for Following {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Following")
    }
}

/// Which kind of backend a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The workspace's own SQLite file, `.tether/tether.db`: one machine.
    Embedded,
    /// A database shared by a team: runs of many machines and workspaces.
    Team,
}

/// Hands the list of the store's operations (every method of [`StoreBackend`] but `kind`, with
/// its docs) to the macro `$callback`, one `fn name(&self, arg: Type, ...) -> Return;` each, with
/// types spelled with full paths. A backend in another crate implements the trait with it, so a
/// new operation cannot be forgotten there.
#[macro_export]
macro_rules! with_store_operations {
    ($callback:ident) => {
        $callback! {
    /// Records that `by` approved the goal's contract with hash `contract_hash`, with a
    /// `contract_approved` event (not tied to a run) in the same transaction.
    fn approve_contract(&self, plan_path: &str, goal_id: &str, contract_hash: &str, by: &str) -> $crate::Result<$crate::Approval>;
    /// [`approve_contract`](Self::approve_contract) with the terms of the approved contract that
    /// bound the agent, read back with the approval: a run takes them from there.
    fn approve_contract_terms(&self, plan_path: &str, goal_id: &str, contract_hash: &str, terms: &$crate::ContractTerms, by: &str) -> $crate::Result<$crate::Approval>;
    /// The approval in force for the goal (the newest), if it was ever approved.
    fn approval(&self, plan_path: &str, goal_id: &str) -> $crate::Result<Option<$crate::Approval>>;
    /// Appends one event, for a run or (with `None`) for no run, and updates the run's
    /// projections in the same transaction. Returns its seq.
    fn append(&self, run_id: Option<&$crate::RunId>, event: &$crate::Event) -> $crate::Result<$crate::Seq>;
    /// Appends several events in one transaction: all of them are written or none.
    fn append_all(&self, run_id: Option<&$crate::RunId>, events: &[$crate::Event]) -> $crate::Result<Vec<$crate::Seq>>;
    /// Takes what the run owes iteration `n`'s prompt — its undelivered messages and the
    /// answers to questions whose asker had stopped waiting — recording `message_delivered` in
    /// the same transaction so each is handed over exactly once. Returns nothing (and records
    /// nothing) when nothing is owed.
    fn deliver(&self, run_id: &$crate::RunId, n: u32) -> $crate::Result<$crate::Delivery>;
    /// A run's events with seq greater than `after`, oldest first, at most `limit` of them.
    fn events(&self, run_id: &$crate::RunId, after: $crate::Seq, limit: usize) -> $crate::Result<Vec<$crate::StoredEvent>>;
    /// A page of a run's events read backwards: the newest `limit` events with seq below
    /// `before` (all of them when `None`), returned oldest first. A dashboard shows the end of
    /// a long journal this way and pages back from the first seq it shows.
    fn events_before(&self, run_id: &$crate::RunId, before: Option<$crate::Seq>, limit: usize) -> $crate::Result<Vec<$crate::StoredEvent>>;
    /// [`events_before`](Self::events_before) of the events a run's usage series is made of
    /// alone (their kinds are [`crate::USAGE_KINDS`]): the newest `limit` of them with seq below
    /// `before`, returned oldest first, however many other events lie between them. The store
    /// reads them through an index of their own, so a chart of a chatty run reads (and decodes)
    /// nothing else.
    fn usage_events_before(&self, run_id: &$crate::RunId, before: Option<$crate::Seq>, limit: usize) -> $crate::Result<Vec<$crate::StoredEvent>>;
    /// Every event (any run, or none) with seq greater than `after`, oldest first, at most
    /// `limit` of them.
    fn events_all_after(&self, after: $crate::Seq, limit: usize) -> $crate::Result<Vec<$crate::StoredEvent>>;
    /// The newest seq in the journal ([`crate::Seq::START`] when it is empty).
    fn last_seq(&self) -> $crate::Result<$crate::Seq>;
    /// Folds the run's whole journal from scratch, ignoring the stored projection.
    fn rebuild_run_state(&self, run_id: &$crate::RunId) -> $crate::Result<$crate::RunState>;
    /// The run's `iterations` rows, ordered by iteration number.
    fn iterations(&self, run_id: &$crate::RunId) -> $crate::Result<Vec<$crate::Iteration>>;
    /// The run's iteration rows as the journal says they should be, ignoring the stored ones.
    fn rebuild_iterations(&self, run_id: &$crate::RunId) -> $crate::Result<Vec<$crate::Iteration>>;
    /// Rewrites the run's projections (`runs` row and `iterations` rows) from its journal.
    ///
    /// Needed only for repair, or after an upgrade that changed what the fold derives.
    fn refresh_projection(&self, run_id: &$crate::RunId) -> $crate::Result<$crate::RunState>;
    /// Stores a pending question and its `question_asked` event in one transaction.
    fn insert_question(&self, new: &$crate::NewQuestion) -> $crate::Result<$crate::Question>;
    /// Records `answer` if it is the first; see [`crate::AnswerOutcome`]. The `question_answered`
    /// event is written in the same transaction. When the question offers choices, the answer
    /// is read against them ([`crate::read_choice`]): a choice is stored as its label and index.
    fn answer_question(&self, id: &$crate::QuestionId, answer: &str, channel: &str, responder: &str) -> $crate::Result<$crate::AnswerOutcome>;
    /// Withdraws a pending question (writing `question_cancelled`). Returns `false`, changing
    /// nothing, if it was already answered or cancelled.
    fn cancel_question(&self, id: &$crate::QuestionId) -> $crate::Result<bool>;
    /// The question with this id.
    fn question(&self, id: &$crate::QuestionId) -> $crate::Result<$crate::Question>;
    /// Every pending question, oldest first.
    fn pending_questions(&self) -> $crate::Result<Vec<$crate::Question>>;
    /// Up to `limit` questions of any status, newest first.
    fn question_history(&self, limit: usize) -> $crate::Result<Vec<$crate::Question>>;
    /// Every question a run asked, oldest first.
    fn questions_for_run(&self, run_id: &$crate::RunId) -> $crate::Result<Vec<$crate::Question>>;
    /// Records that the question was posted on `channel`. Returns `false`, keeping the earlier
    /// record, if it had already been posted there.
    fn record_post(&self, question_id: &$crate::QuestionId, channel: &str, external_ref: &::serde_json::Value) -> $crate::Result<bool>;
    /// Replaces a post's `external_ref` (e.g. to advance the last Zulip message seen).
    fn update_post_ref(&self, question_id: &$crate::QuestionId, channel: &str, external_ref: &::serde_json::Value) -> $crate::Result<()>;
    /// Where the question has been posted, in posting order.
    fn posts(&self, question_id: &$crate::QuestionId) -> $crate::Result<Vec<$crate::QuestionPost>>;
    /// Creates a run and writes its `run_started` event in one transaction.
    ///
    /// `spec` is stored as given; put `max_iterations` in it to have it appear in
    /// [`crate::RunState::max_iterations`]. Never put secrets in it.
    fn create_run(&self, kind: $crate::RunKind, workspace: &::std::path::Path, spec: &::serde_json::Value) -> $crate::Result<$crate::RunId>;
    /// [`create_run`](Self::create_run) under `id`, drawn beforehand with
    /// [`RunId::generate`](crate::RunId::generate) (a run's worktree and branch are named after
    /// it before the run exists). Refused when a run has that id.
    fn create_run_as(&self, id: &$crate::RunId, kind: $crate::RunKind, workspace: &::std::path::Path, spec: &::serde_json::Value) -> $crate::Result<$crate::RunId>;
    /// The run with this id.
    fn run(&self, id: &$crate::RunId) -> $crate::Result<$crate::Run>;
    /// The most recently created run, if there is one.
    fn latest_run(&self) -> $crate::Result<Option<$crate::Run>>;
    /// Up to `limit` runs, newest first.
    fn runs(&self, limit: usize) -> $crate::Result<Vec<$crate::Run>>;
    /// Up to `limit` runs listed after `last` in [`runs`](Self::runs)' order (older, or as old
    /// and created before it): the next page of a list that ended with `last`. An unknown `last`
    /// gives none.
    fn runs_after(&self, last: &$crate::RunId, limit: usize) -> $crate::Result<Vec<$crate::Run>>;
    /// Up to `limit` runs that pass `filter`, newest first, after `after` in that order (from
    /// the newest when `None`; an unknown `after` gives none): a team's list by machine,
    /// workspace or state, read by the store, however many runs it holds.
    fn runs_matching(&self, filter: &$crate::RunFilter, after: Option<&$crate::RunId>, limit: usize) -> $crate::Result<Vec<$crate::Run>>;
    /// Records a new run of many goals (see `fleets.rs`), every goal `waiting`.
    fn begin_fleet(&self, fleet: &$crate::NewFleet) -> $crate::Result<()>;
    /// Records that goal `goal_id` of run of many goals `fleet_id` is now `state`; with
    /// `run_id`, worked on by that goal run on this machine.
    fn set_fleet_goal(&self, fleet_id: &$crate::RunId, goal_id: &str, state: $crate::GoalState, run_id: Option<&$crate::RunId>) -> $crate::Result<()>;
    /// Records that the run of many goals `fleet_id` ended, and how.
    fn end_fleet(&self, fleet_id: &$crate::RunId, outcome: &str) -> $crate::Result<()>;
    /// The run of many goals with this id, with its goals in the plan's order.
    fn fleet(&self, fleet_id: &$crate::RunId) -> $crate::Result<$crate::Fleet>;
    /// Up to `limit` runs of many goals, newest first, each with its goals.
    fn fleets(&self, limit: usize) -> $crate::Result<Vec<$crate::Fleet>>;
    /// Claims for `holder`, for `ttl_ms`, the first goal a worker may take (see
    /// `fleet_claims.rs`): `ready`, or its worker's lease lapsed, of the oldest run of many
    /// goals going on whose goals work on many machines; `None` when there is none.
    fn claim_fleet_goal(&self, holder: &$crate::Holder, ttl_ms: i64) -> $crate::Result<Option<$crate::GoalClaim>>;
    /// Extends the goal's lease `token` holds for `ttl_ms` from now (when it now lapses);
    /// [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) when it lapsed or was taken.
    fn renew_fleet_goal(&self, fleet_id: &$crate::RunId, goal_id: &str, token: i64, ttl_ms: i64) -> $crate::Result<i64>;
    /// The worker holding the goal's lease with `token` reports where it stands (with the goal
    /// run working on it); any state but `working` ends its lease. Refused like a renewal.
    fn report_fleet_goal(&self, fleet_id: &$crate::RunId, goal_id: &str, token: i64, state: $crate::GoalState, run_id: Option<&$crate::RunId>) -> $crate::Result<()>;
    /// Adds a schedule (see `schedules.rs`); `false`, adding nothing, when its workspace has one
    /// of that name.
    fn add_schedule(&self, new: &$crate::NewSchedule) -> $crate::Result<bool>;
    /// The schedules of `workspace`, by name.
    fn schedules(&self, workspace: &::std::path::Path) -> $crate::Result<Vec<$crate::Schedule>>;
    /// The schedule `name` of `workspace`.
    fn schedule(&self, workspace: &::std::path::Path, name: &str) -> $crate::Result<$crate::Schedule>;
    /// Removes the schedule `name` of `workspace`; whether there was one.
    fn remove_schedule(&self, workspace: &::std::path::Path, name: &str) -> $crate::Result<bool>;
    /// Pauses the schedule or resumes it (resumed, its failures are forgotten, it is no longer
    /// overdue, and when it was paused the time of its resume is kept); whether there is one.
    fn pause_schedule(&self, workspace: &::std::path::Path, name: &str, paused: bool) -> $crate::Result<bool>;
    /// Claims the schedule's next fire at `at_ms` for `holder`, for `ttl_ms`, with a token no
    /// schedule ever had: only while its fire token is still `seen`, it is not paused and no
    /// fire of it goes on (or that one's lease lapsed); `None` when another scheduler fired it
    /// or it may not fire.
    fn claim_schedule_fire(&self, workspace: &::std::path::Path, name: &str, seen: i64, at_ms: i64, holder: &$crate::Holder, ttl_ms: i64) -> $crate::Result<Option<$crate::FireClaim>>;
    /// Extends the lease of the fire `token` holds for `ttl_ms` from now;
    /// [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) when another fire took over.
    fn renew_schedule_fire(&self, workspace: &::std::path::Path, name: &str, token: i64, ttl_ms: i64) -> $crate::Result<i64>;
    /// Records `run` as the run of the fire `token` holds, once it started; refused like a
    /// renewal.
    fn start_schedule_fire(&self, workspace: &::std::path::Path, name: &str, token: i64, run: &$crate::RunId) -> $crate::Result<()>;
    /// Records the fire `seen` of the schedule as abandoned with `outcome` (its lease lapsed
    /// and it never ended: its scheduler stopped), counting no failure, while its run is still
    /// `run`; whether this call recorded it. The schedule may then fire again.
    fn abandon_schedule_fire(&self, workspace: &::std::path::Path, name: &str, seen: i64, run: Option<&$crate::RunId>, outcome: &str) -> $crate::Result<bool>;
    /// Ends the fire `token` holds with how its run ended, counting a failure (the
    /// `pause_after`th in a row pauses the schedule); refused like a renewal.
    fn end_schedule_fire(&self, workspace: &::std::path::Path, name: &str, token: i64, end: &$crate::FireEnd, pause_after: u32) -> $crate::Result<$crate::FireEnded>;
    /// Marks the schedule overdue at `at_ms` while its fire token is still `seen` and it was not
    /// marked in this spell; whether this call marked it (and so tells people).
    fn mark_schedule_overdue(&self, workspace: &::std::path::Path, name: &str, seen: i64, at_ms: i64) -> $crate::Result<bool>;
    /// Claims the run for `holder` for `ttl_ms` (see `leases.rs`): the lease with a new fencing
    /// token, unless another holder's lease is live ([`Claim::Held`](crate::Claim)). A lapsed
    /// or released lease, the caller's own, or one whose holder `is_gone` (the caller knows
    /// that process died) is claimed again.
    fn claim_run(&self, run_id: &$crate::RunId, holder: &$crate::Holder, ttl_ms: i64, is_gone: &dyn Fn(&$crate::Holder) -> bool) -> $crate::Result<$crate::Claim>;
    /// Extends the lease `token` holds for `ttl_ms` from now; [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) when it lapsed or was taken.
    fn renew_run(&self, run_id: &$crate::RunId, token: i64, ttl_ms: i64) -> $crate::Result<$crate::Lease>;
    /// Releases the lease `token` holds; whether it still held it.
    fn release_run(&self, run_id: &$crate::RunId, token: i64) -> $crate::Result<bool>;
    /// The run's live lease, if a process holds one.
    fn run_lease(&self, run_id: &$crate::RunId) -> $crate::Result<Option<$crate::Lease>>;
    /// [`append_all`](Self::append_all) for the run's driver: written only while `token` holds
    /// the run's live lease, in the same transaction, else
    /// [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) and nothing written.
    fn append_fenced(&self, run_id: &$crate::RunId, token: i64, events: &[$crate::Event]) -> $crate::Result<Vec<$crate::Seq>>;
    /// Reserves the next attempt at signing the goal off for `holder`, unless another sign-off
    /// of it is running: a running one whose holder `is_gone` (its process died) is taken over.
    fn reserve_signoff(&self, plan_path: &str, goal_id: &str, holder: &str, is_gone: &dyn Fn(&str) -> bool) -> $crate::Result<$crate::Reservation>;
    /// Releases `holder`'s reservation of the goal (if it still has it).
    fn release_signoff(&self, plan_path: &str, goal_id: &str, holder: &str) -> $crate::Result<()>;
    /// Records a cancellation. Returns its id.
    fn record_cancellation(&self, new: &$crate::NewCancellation) -> $crate::Result<i64>;
    /// The id of the newest cancellation recorded (0 when there is none).
    fn last_cancellation_id(&self) -> $crate::Result<i64>;
    /// The newest cancellation of the goal, if any.
    fn latest_cancellation(&self, plan_path: &str, goal_id: &str) -> $crate::Result<Option<$crate::Cancellation>>;
    /// Takes the next topic number for `stream` (1, 2, 3, ...), atomically across processes.
    fn next_topic_number(&self, stream: &str) -> $crate::Result<u64>;
    /// Records a sign-off decision and its `goal_verdict` event (for the verdict's run, if any)
    /// in one transaction. Returns the record's id. Do not also append `goal_verdict` yourself.
    fn insert_verdict(&self, new: &$crate::NewVerdict) -> $crate::Result<i64>;
    /// Every decision recorded for the goal, oldest first.
    fn verdicts_for_goal(&self, plan_path: &str, goal_id: &str) -> $crate::Result<Vec<$crate::VerdictRecord>>;
    /// Every decision a run recorded, oldest first (each with the `goal_verdict` event written
    /// in the same transaction, at the same `created_at_ms`).
    fn verdicts_for_run(&self, run_id: &$crate::RunId) -> $crate::Result<Vec<$crate::VerdictRecord>>;
    /// Every decision recorded for the plan after the record `after_id` (0 for all), oldest
    /// first, whichever run (or none) made it: a loop uses this to see the sign-off attempts of
    /// an iteration, including ones made with `tether goal complete` from the agent's shell.
    fn verdicts_after(&self, plan_path: &str, after_id: i64) -> $crate::Result<Vec<$crate::VerdictRecord>>;
    /// The id of the newest decision recorded (0 when there is none).
    fn last_verdict_id(&self) -> $crate::Result<i64>;
    /// Whether the goal has ever been accepted.
    fn has_accepted_signoff(&self, plan_path: &str, goal_id: &str) -> $crate::Result<bool>;
    /// Records that whoever asked `id` stopped waiting for it. Records nothing (and returns
    /// `false`) when it is no longer pending or was already abandoned.
    fn abandon_question(&self, id: &$crate::QuestionId, reason: &str) -> $crate::Result<bool>;
    /// Records that someone waits for `id` again, if it was abandoned; returns whether it was.
    fn await_question(&self, id: &$crate::QuestionId) -> $crate::Result<bool>;
    /// Why nobody waits for `question`, if it is pending and nobody does.
    fn abandoned(&self, question: &$crate::Question) -> $crate::Result<Option<$crate::Abandoned>>;
    /// The schema version of the open database (`PRAGMA user_version`).
    fn schema_version(&self) -> $crate::Result<i64>;
    /// A number that changes whenever *another* connection commits to the database
    /// (`PRAGMA data_version`). Cheap: poll it to notice new events, answers or runs written by
    /// another process, then read what changed. Commits through this same `Store` do not
    /// change it.
    fn data_version(&self) -> $crate::Result<i64>;
    /// Runs the backend's consistency check (SQLite's full one); [`crate::StoreError::Corrupt`] lists what it found.
    fn check_integrity(&self) -> $crate::Result<()>;
        }
    };
}

/// Generates [`StoreBackend`], its implementation for [`Sqlite`] (delegating to the inherent
/// methods of the same names) and [`Store`]'s methods (delegating to its backend).
macro_rules! store_operations {
    ($( $(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        /// One backend of the store. Implementations must keep the store's rules (see the
        /// crate docs); the suite in `tether-store-pg`'s tests runs against every backend.
        pub trait StoreBackend: Send + std::fmt::Debug {
            /// Which kind of backend this is: a workspace's own file, or a team's database.
            fn kind(&self) -> BackendKind;
            /// Calls `on_change` for every change committed by anyone, until the returned guard
            /// drops; `None` when the backend has no such feed (the embedded store: processes
            /// of one workspace poke each other through `.tether/` instead).
            fn follow(&self, on_change: OnChange) -> Option<Following> {
                let _ = on_change;
                None
            }
            $( $(#[$doc])* fn $name(&self $(, $arg: $ty)*) -> $ret; )*
        }

        impl StoreBackend for Sqlite {
            fn kind(&self) -> BackendKind {
                BackendKind::Embedded
            }
            $( fn $name(&self $(, $arg: $ty)*) -> $ret { Sqlite::$name(self $(, $arg)*) } )*
        }

        impl Store {
            /// Which kind of backend this store talks to.
            pub fn kind(&self) -> BackendKind {
                self.backend.kind()
            }
            /// See [`StoreBackend::follow`].
            pub fn follow(&self, on_change: OnChange) -> Option<Following> {
                self.backend.follow(on_change)
            }
            $( $(#[$doc])* pub fn $name(&self $(, $arg: $ty)*) -> $ret {
                self.backend.$name($($arg),*)
            } )*
        }
    };
}

/// A connection to tether's store, whichever backend holds it.
///
/// `Send` but not `Sync`: give each thread its own `Store` (opening is cheap), or share one
/// behind a mutex (see [`crate::Journal`]).
#[derive(Debug)]
pub struct Store {
    backend: Box<dyn StoreBackend>,
}

impl Store {
    /// Opens (creating if needed) the embedded store at `path`, usually
    /// `<workspace>/.tether/tether.db`, creating its parent directories and migrating its schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Ok(Store::from_backend(Box::new(Sqlite::open(path)?)))
    }

    /// [`Store::open`] with explicit settings.
    pub fn open_with(path: impl AsRef<Path>, options: &StoreOptions) -> Result<Store> {
        Ok(Store::from_backend(Box::new(Sqlite::open_with(
            path, options,
        )?)))
    }

    /// A private in-memory embedded store, for tests.
    pub fn open_in_memory() -> Result<Store> {
        Ok(Store::from_backend(Box::new(Sqlite::open_in_memory()?)))
    }

    /// [`Store::open_in_memory`] with explicit settings (e.g. a fixed clock).
    pub fn open_in_memory_with(options: &StoreOptions) -> Result<Store> {
        Ok(Store::from_backend(Box::new(Sqlite::open_in_memory_with(
            options,
        )?)))
    }

    /// A store over any backend (the team store's crate builds one this way).
    pub fn from_backend(backend: Box<dyn StoreBackend>) -> Store {
        Store { backend }
    }
}

with_store_operations!(store_operations);
