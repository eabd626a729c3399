//! Appending to the journal and keeping the run's projection in step, in one transaction.
//!
//! PostgreSQL hands out seqs when events are inserted, not when they commit, so two appends can
//! commit out of seq order; a reader resuming "after seq N" must still miss nothing:
//! - Within a run, [`append_in`] locks the run's row (`FOR UPDATE`) before it draws its seqs
//!   and holds the lock to the commit: a run's events commit in seq order.
//! - Across runs, appends hold the journal's advisory lock *shared* (appends of different runs
//!   run in parallel), and a reader of the whole journal ([`PgStore::events_all_after`],
//!   [`PgStore::last_seq`]) takes it *exclusive* for the moment of its read: no append is half
//!   done then, so every seq up to the newest is committed.
//!
//! Under those locks it reads the run's projected state, folds each event in with
//! [`RunState::apply`], writes the state back, and sends the wake-ups ([`crate::Channel`]) that
//! are delivered on commit.

use tether_store::{Delivery, Event, RunId, RunState, Seq, StoredEvent, usage_kinds_sql};
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use crate::conn::Conn;
use crate::error::{PgStoreError, Result};
use crate::listen::Channel;
use crate::store::PgStore;

/// The advisory lock key appends hold shared and whole-journal readers exclusive ("tether" and
/// 2).
pub(crate) const JOURNAL_LOCK: i64 = 0x7465_7468_6572_0002;

pub(crate) const EVENT_COLUMNS: &str = "seq, run_id, at_ms, kind, payload";

impl PgStore {
    /// Appends one event, for a run or (with `None`) for no run, and updates the run's
    /// projection in the same transaction. Returns its seq.
    pub async fn append(&self, run_id: Option<&RunId>, event: &Event) -> Result<Seq> {
        let seqs = self.append_all(run_id, std::slice::from_ref(event)).await?;
        seqs.into_iter()
            .next()
            .ok_or_else(|| PgStoreError::corrupt("an append returned no seq"))
    }

    /// Appends several events in one transaction: all of them are written or none.
    ///
    /// The transaction is begun and committed by hand, each in the same exchange with the
    /// server as the statements around it, so the journal's lock is held for one round trip.
    pub async fn append_all(&self, run_id: Option<&RunId>, events: &[Event]) -> Result<Vec<Seq>> {
        let client = self.client().await?;
        match append_with(&*client, run_id, self.now(), events, Bracket::ByHand).await {
            Ok(seqs) => Ok(seqs),
            Err(err) => {
                if client.batch_execute("ROLLBACK").await.is_err() {
                    // Never hand a connection that may still be in a transaction back.
                    let _ = deadpool_postgres::Object::take(client);
                }
                Err(err)
            }
        }
    }

    /// A run's events with seq greater than `after`, oldest first, at most `limit` of them.
    pub async fn events(
        &self,
        run_id: &RunId,
        after: Seq,
        limit: usize,
    ) -> Result<Vec<StoredEvent>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = $1 AND seq > $2 \
                 ORDER BY seq LIMIT $3"
            ))
            .await?;
        let rows = client
            .query(&stmt, &[&run_id.as_str(), &after.0, &limit_of(limit)])
            .await?;
        rows.iter().map(decode_event).collect()
    }

    /// A page of a run's events read backwards: the newest `limit` events with seq below
    /// `before` (all of them when `None`), returned oldest first.
    pub async fn events_before(
        &self,
        run_id: &RunId,
        before: Option<Seq>,
        limit: usize,
    ) -> Result<Vec<StoredEvent>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = $1 AND seq < $2 \
                 ORDER BY seq DESC LIMIT $3"
            ))
            .await?;
        let before = before.map_or(i64::MAX, |s| s.0);
        let rows = client
            .query(&stmt, &[&run_id.as_str(), &before, &limit_of(limit)])
            .await?;
        oldest_first(&rows)
    }

    /// [`PgStore::events_before`] of the events a run's usage series is made of alone (their
    /// kinds are [`tether_store::USAGE_KINDS`]), read through their own index: the kinds are
    /// written into the statement as that index names them (migration 8), not bound, so
    /// PostgreSQL uses it in every plan it makes, the generic one it keeps for a statement run
    /// often included (which, with the kinds bound, may walk the whole journal back by seq).
    pub async fn usage_events_before(
        &self,
        run_id: &RunId,
        before: Option<Seq>,
        limit: usize,
    ) -> Result<Vec<StoredEvent>> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(&usage_events_sql()).await?;
        let before = before.map_or(i64::MAX, |s| s.0);
        let rows = client
            .query(&stmt, &[&run_id.as_str(), &before, &limit_of(limit)])
            .await?;
        oldest_first(&rows)
    }

    /// Takes what the run owes iteration `n`'s prompt (queued messages, answers that came after
    /// their asker stopped waiting), recording `message_delivered` in the same transaction so
    /// each is handed over exactly once.
    pub async fn deliver(&self, run_id: &RunId, n: u32) -> Result<Delivery> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let state = load_state(&tx, run_id, true).await?;
        let mut answers = Vec::with_capacity(state.late_answers.len());
        for id in &state.late_answers {
            answers.push(crate::questions::load_question(&tx, id).await?);
        }
        let delivery = Delivery {
            messages: state.queued_messages,
            answers,
        };
        if !delivery.messages.is_empty() || !delivery.answers.is_empty() {
            append_in(
                &tx,
                Some(run_id),
                self.now(),
                &[Event::MessageDelivered { n }],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(delivery)
    }

    /// Every event (any run, or none) with seq greater than `after`, oldest first, at most
    /// `limit` of them.
    pub async fn events_all_after(&self, after: Seq, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut client = self.client().await?;
        let tx = quiet_journal(&mut client).await?;
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE seq > $1 ORDER BY seq LIMIT $2"
            ))
            .await?;
        let rows = tx.query(&stmt, &[&after.0, &limit_of(limit)]).await?;
        tx.commit().await?;
        rows.iter().map(decode_event).collect()
    }

    /// The newest seq in the journal ([`Seq::START`] when it is empty); every smaller one is
    /// committed.
    pub async fn last_seq(&self) -> Result<Seq> {
        let mut client = self.client().await?;
        let tx = quiet_journal(&mut client).await?;
        let row = tx
            .query_one("SELECT COALESCE(MAX(seq), 0) FROM events", &[])
            .await?;
        tx.commit().await?;
        Ok(Seq(row.get(0)))
    }

    /// Folds the run's whole journal from scratch, ignoring the stored projection.
    pub async fn rebuild_run_state(&self, run_id: &RunId) -> Result<RunState> {
        let events = self.whole_journal(run_id).await?;
        Ok(RunState::from_events(&events))
    }
}

/// Appends `events` inside an open transaction; see the module docs.
pub(crate) async fn append_in(
    tx: &impl Conn,
    run_id: Option<&RunId>,
    at_ms: i64,
    events: &[Event],
) -> Result<Vec<Seq>> {
    append_with(tx, run_id, at_ms, events, Bracket::Caller).await
}

/// Who begins and ends an append's transaction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bracket {
    /// The caller, around the append (it writes more in the same transaction).
    Caller,
    /// The append: `BEGIN` goes with its first statements, `COMMIT` with its last.
    ByHand,
}

/// [`append_in`], beginning and committing the transaction itself when `bracket` says so.
async fn append_with(
    tx: &impl Conn,
    run_id: Option<&RunId>,
    at_ms: i64,
    events: &[Event],
    bracket: Bracket,
) -> Result<Vec<Seq>> {
    let by_hand = bracket == Bracket::ByHand;
    if events.is_empty() {
        if let Some(id) = run_id {
            load_state(tx, id, false).await?;
        }
        return Ok(Vec::new());
    }
    let begin = async {
        if by_hand {
            tx.batch_execute("BEGIN").await?;
        }
        Ok::<_, PgStoreError>(())
    };
    // Sent together (pipelined) and run in this order by the server: the journal's lock
    // (shared), the run's row (locked) and state, then the seqs the events will have — drawn
    // under the row lock, so a run's events commit in seq order.
    let lock = tx
        .prepare_cached("SELECT pg_advisory_xact_lock_shared($1)")
        .await?;
    let draw = tx
        .prepare_cached(
            "SELECT nextval(pg_get_serial_sequence('events', 'seq')) \
             FROM generate_series(1, $1::BIGINT)",
        )
        .await?;
    let count = i64::try_from(events.len()).unwrap_or(i64::MAX);
    let (_, _, state, drawn) = futures_util::future::try_join4(
        begin,
        async { Ok(tx.execute(&lock, &[&JOURNAL_LOCK]).await?) },
        async {
            match run_id {
                Some(id) => load_state(tx, id, true).await.map(Some),
                None => Ok(None),
            }
        },
        async { Ok::<_, PgStoreError>(tx.query(&draw, &[&count]).await?) },
    )
    .await?;
    let seqs: Vec<Seq> = drawn.iter().map(|row| Seq(row.get(0))).collect();
    let mut state = state;
    let mut writes = Vec::new();
    for (event, &seq) in events.iter().zip(&seqs) {
        if let Some(state) = state.as_mut() {
            writes.extend(tether_store::writes_for(state, event));
            state.apply(seq, at_ms, event);
        }
    }
    let control = events.iter().any(is_control);
    // Then every write at once (pipelined): the events, the iteration rows, the run's state,
    // the wake-ups.
    let insert = tx
        .prepare_cached(
            "INSERT INTO events (seq, run_id, at_ms, kind, payload) OVERRIDING SYSTEM VALUE \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .await?;
    // Iteration rows first, in order (a row may be started and ended by one append); they
    // change only at iteration boundaries.
    if let Some(id) = run_id {
        for write in &writes {
            crate::iterations::write_iteration(tx, id, at_ms, write).await?;
        }
    }
    // Every statement of the exchange is prepared before it, so each is sent in this order,
    // `COMMIT` last.
    tx.prepare_cached(SAVE_STATE).await?;
    tx.prepare_cached(NOTIFY).await?;
    let mut pending: Vec<Pending<'_>> = Vec::new();
    for (event, seq) in events.iter().zip(&seqs) {
        let insert = &insert;
        pending.push(Box::pin(async move {
            tx.execute(
                insert,
                &[
                    &seq.0,
                    &run_id.map(RunId::as_str),
                    &at_ms,
                    &event.kind(),
                    &Json(event),
                ],
            )
            .await?;
            Ok(())
        }));
    }
    if let (Some(id), Some(state)) = (run_id, &state) {
        pending.push(Box::pin(save_state(tx, id, at_ms, state)));
    }
    let payload = run_id.map_or("", RunId::as_str);
    pending.push(Box::pin(notify(tx, Channel::Events, payload)));
    if control {
        pending.push(Box::pin(notify(tx, Channel::Control, payload)));
    }
    if by_hand {
        pending.push(Box::pin(async {
            tx.batch_execute("COMMIT").await?;
            Ok(())
        }));
    }
    futures_util::future::try_join_all(pending).await?;
    Ok(seqs)
}

/// A read-only transaction in which no append is half done: the journal's lock taken
/// exclusive (held until the caller commits).
async fn quiet_journal(
    client: &mut deadpool_postgres::Client,
) -> Result<deadpool_postgres::Transaction<'_>> {
    let tx = client.build_transaction().read_only(true).start().await?;
    let lock = tx
        .prepare_cached("SELECT pg_advisory_xact_lock($1)")
        .await?;
    tx.execute(&lock, &[&JOURNAL_LOCK]).await?;
    Ok(tx)
}

/// Writes a run's projected state.
const SAVE_STATE: &str = "UPDATE runs SET status = $2, iteration = $3, updated_at_ms = $4, \
                          last_event_seq = $5, state = $6 WHERE id = $1";
/// Queues a wake-up, delivered on commit.
const NOTIFY: &str = "SELECT pg_notify($1, $2)";

/// One of the writes an append sends together.
type Pending<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send + 'a>>;

/// Queues a wake-up on `channel`, delivered when the transaction commits.
pub(crate) async fn notify(tx: &impl Conn, channel: Channel, payload: &str) -> Result<()> {
    let stmt = tx.prepare_cached(NOTIFY).await?;
    tx.execute(&stmt, &[&channel.name(), &payload]).await?;
    Ok(())
}

/// Events that ask something of a running loop: pause, cancel, a message for its agent.
fn is_control(event: &Event) -> bool {
    matches!(
        event,
        Event::PauseRequested { .. } | Event::CancelRequested { .. } | Event::MessageQueued { .. }
    )
}

/// The run's projected state; `lock` takes its row for the rest of the transaction.
pub(crate) async fn load_state(tx: &impl Conn, run_id: &RunId, lock: bool) -> Result<RunState> {
    let sql = if lock {
        "SELECT state FROM runs WHERE id = $1 FOR UPDATE"
    } else {
        "SELECT state FROM runs WHERE id = $1"
    };
    let stmt = tx.prepare_cached(sql).await?;
    let row = tx
        .query_opt(&stmt, &[&run_id.as_str()])
        .await?
        .ok_or_else(|| run_not_found(run_id))?;
    let Json(state) = row
        .try_get::<_, Json<RunState>>(0)
        .map_err(|err| PgStoreError::corrupt(format!("column runs.state: {err}")))?;
    Ok(state)
}

pub(crate) async fn save_state(
    tx: &impl Conn,
    run_id: &RunId,
    at_ms: i64,
    state: &RunState,
) -> Result<()> {
    let stmt = tx.prepare_cached(SAVE_STATE).await?;
    tx.execute(
        &stmt,
        &[
            &run_id.as_str(),
            &state.status.as_str(),
            &i64::from(state.iteration),
            &at_ms,
            &state.last_event_seq.0,
            &Json(state),
        ],
    )
    .await?;
    Ok(())
}

/// The statement [`PgStore::usage_events_before`] runs (parameters: the run, the seq below
/// which, the limit), for a test to ask PostgreSQL how it plans it.
pub fn usage_events_sql() -> String {
    format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = $1 AND seq < $2 \
         AND kind IN ({}) ORDER BY seq DESC LIMIT $3",
        usage_kinds_sql()
    )
}

pub(crate) fn run_not_found(run_id: &RunId) -> PgStoreError {
    PgStoreError::NotFound {
        what: "run",
        id: run_id.to_string(),
    }
}

/// A caller's count as a SQL `LIMIT` (saturating).
pub(crate) fn limit_of(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Parses a text column into `T`, naming the column if it does not parse.
pub(crate) fn parse<T>(column: &str, text: &str) -> Result<T>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|err| PgStoreError::corrupt(format!("column {column}: {err}")))
}

/// Reads column `i`, naming `column` if its type is not what this build expects.
pub(crate) fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    i: usize,
    column: &str,
) -> Result<T> {
    row.try_get(i)
        .map_err(|err| PgStoreError::corrupt(format!("column {column}: {err}")))
}

/// A page of events read newest first, decoded and turned oldest first.
fn oldest_first(rows: &[Row]) -> Result<Vec<StoredEvent>> {
    let mut page = rows.iter().map(decode_event).collect::<Result<Vec<_>>>()?;
    page.reverse();
    Ok(page)
}

pub(crate) fn decode_event(row: &Row) -> Result<StoredEvent> {
    let run_id: Option<String> = get(row, 1, "events.run_id")?;
    let payload: serde_json::Value = get(row, 4, "events.payload")?;
    Ok(StoredEvent {
        seq: Seq(get(row, 0, "events.seq")?),
        run_id: run_id.map(|id| parse("events.run_id", &id)).transpose()?,
        at_ms: get(row, 2, "events.at_ms")?,
        kind: get(row, 3, "events.kind")?,
        event: serde_json::from_value(payload.clone()).ok(),
        payload,
    })
}

/// `err`, except that a foreign-key failure on a row naming `run` means the run does not exist.
pub(crate) fn missing_run_or(err: tokio_postgres::Error, run: Option<&RunId>) -> PgStoreError {
    let fk = err.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION);
    match (run, fk) {
        (Some(run_id), true) => run_not_found(run_id),
        _ => err.into(),
    }
}
