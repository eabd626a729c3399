//! Appending to the event journal and keeping the projections in step.
//!
//! Every write that changes a run goes through [`append_in`]: inside the caller's
//! `BEGIN IMMEDIATE` transaction it inserts the events, updates the run's `iterations` rows and
//! folds the events into the `runs` row with [`RunState::apply`]. Because the write lock is held
//! from the start, the state read at the top of the transaction is the latest one, and the
//! projection can never disagree with the journal it was derived from.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{Result, StoreError};
use crate::event::{Event, StoredEvent, usage_kinds_sql};
use crate::ids::{RunId, Seq};
use crate::iterations::{self, Iteration, IterationWrite};
use crate::questions::load_question;
use crate::row;
use crate::state::{QueuedMessage, RunState};
use crate::store::Sqlite;

const EVENT_COLUMNS: &str = "seq, run_id, at_ms, kind, payload";

/// What [`crate::Store::deliver`] took for a prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Messages queued with `tether say`, oldest first.
    pub messages: Vec<QueuedMessage>,
    /// Questions answered after their asker stopped waiting, with their answers.
    pub answers: Vec<crate::Question>,
}

impl Sqlite {
    pub fn append(&self, run_id: Option<&RunId>, event: &Event) -> Result<Seq> {
        let seqs = self.append_all(run_id, std::slice::from_ref(event))?;
        seqs.into_iter()
            .next()
            .ok_or_else(|| StoreError::corrupt("an append returned no seq"))
    }

    pub fn append_all(&self, run_id: Option<&RunId>, events: &[Event]) -> Result<Vec<Seq>> {
        let tx = self.write()?;
        let seqs = append_in(&tx, run_id, self.now(), events)?;
        tx.commit()?;
        Ok(seqs)
    }

    pub fn deliver(&self, run_id: &RunId, n: u32) -> Result<Delivery> {
        let tx = self.write()?;
        let state = load_state(&tx, run_id)?;
        let answers = state
            .late_answers
            .iter()
            .map(|id| load_question(&tx, id))
            .collect::<Result<Vec<_>>>()?;
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
            )?;
        }
        tx.commit()?;
        Ok(delivery)
    }

    pub fn events(&self, run_id: &RunId, after: Seq, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = ?1 AND seq > ?2 \
             ORDER BY seq LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![run_id.as_str(), after.0, row::limit(limit)],
            raw_event,
        )?;
        rows.map(|raw| decode_event(raw?)).collect()
    }

    pub fn events_before(
        &self,
        run_id: &RunId,
        before: Option<Seq>,
        limit: usize,
    ) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = ?1 AND seq < ?2 \
             ORDER BY seq DESC LIMIT ?3"
        ))?;
        let before = before.map_or(i64::MAX, |s| s.0);
        let rows = stmt.query_map(
            params![run_id.as_str(), before, row::limit(limit)],
            raw_event,
        )?;
        oldest_first(rows)
    }

    pub fn usage_events_before(
        &self,
        run_id: &RunId,
        before: Option<Seq>,
        limit: usize,
    ) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn.prepare_cached(&usage_events_sql())?;
        let before = before.map_or(i64::MAX, |s| s.0);
        let rows = stmt.query_map(
            params![run_id.as_str(), before, row::limit(limit)],
            raw_event,
        )?;
        oldest_first(rows)
    }

    pub fn events_all_after(&self, after: Seq, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![after.0, row::limit(limit)], raw_event)?;
        rows.map(|raw| decode_event(raw?)).collect()
    }

    pub fn last_seq(&self) -> Result<Seq> {
        let seq: i64 =
            self.conn
                .query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |row| {
                    row.get(0)
                })?;
        Ok(Seq(seq))
    }

    pub fn rebuild_run_state(&self, run_id: &RunId) -> Result<RunState> {
        let tx = self.read()?;
        ensure_run(&tx, run_id)?;
        let events = all_events(&tx, run_id)?;
        tx.commit()?;
        Ok(RunState::from_events(&events))
    }

    pub fn iterations(&self, run_id: &RunId) -> Result<Vec<Iteration>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT run_id, n, started_at_ms, ended_at_ms, outcome, summary FROM iterations \
             WHERE run_id = ?1 ORDER BY n",
        )?;
        let rows = stmt.query_map([run_id.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })?;
        rows.map(|r| {
            let (run_id, n, started_at_ms, ended_at_ms, outcome, summary) = r?;
            Ok(Iteration {
                run_id: row::parse("iterations.run_id", &run_id)?,
                n,
                started_at_ms,
                ended_at_ms,
                outcome: row::parse_opt("iterations.outcome", outcome)?,
                summary,
            })
        })
        .collect()
    }

    pub fn rebuild_iterations(&self, run_id: &RunId) -> Result<Vec<Iteration>> {
        let tx = self.read()?;
        ensure_run(&tx, run_id)?;
        let events = all_events(&tx, run_id)?;
        tx.commit()?;
        Ok(fold_iterations(run_id, &events).into_values().collect())
    }

    pub fn refresh_projection(&self, run_id: &RunId) -> Result<RunState> {
        let tx = self.write()?;
        ensure_run(&tx, run_id)?;
        let events = all_events(&tx, run_id)?;
        let state = RunState::from_events(&events);
        tx.execute(
            "DELETE FROM iterations WHERE run_id = ?1",
            [run_id.as_str()],
        )?;
        for iteration in fold_iterations(run_id, &events).values() {
            tx.execute(
                "INSERT INTO iterations (run_id, n, started_at_ms, ended_at_ms, outcome, summary) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run_id.as_str(),
                    iteration.n,
                    iteration.started_at_ms,
                    iteration.ended_at_ms,
                    iteration.outcome.map(|o| o.as_str()),
                    iteration.summary,
                ],
            )?;
        }
        let updated_at = state.last_event_at_ms.unwrap_or_else(|| self.now());
        save_state(&tx, run_id, updated_at, &state)?;
        tx.commit()?;
        Ok(state)
    }
}

/// Appends `events` inside an open write transaction; see the module docs.
pub(crate) fn append_in(
    conn: &Connection,
    run_id: Option<&RunId>,
    at_ms: i64,
    events: &[Event],
) -> Result<Vec<Seq>> {
    let mut state = run_id.map(|id| load_state(conn, id)).transpose()?;
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut insert = conn.prepare_cached(
        "INSERT INTO events (run_id, at_ms, kind, payload) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut seqs = Vec::with_capacity(events.len());
    for event in events {
        let payload = serde_json::to_string(event)?;
        insert.execute(params![
            run_id.map(RunId::as_str),
            at_ms,
            event.kind(),
            payload
        ])?;
        let seq = Seq(conn.last_insert_rowid());
        if let (Some(id), Some(state)) = (run_id, state.as_mut()) {
            for write in iterations::writes_for(state, event) {
                write_iteration(conn, id, at_ms, &write)?;
            }
            state.apply(seq, at_ms, event);
        }
        seqs.push(seq);
    }
    if let (Some(id), Some(state)) = (run_id, &state) {
        save_state(conn, id, at_ms, state)?;
    }
    Ok(seqs)
}

/// [`StoreError::NotFound`] unless the run exists.
pub(crate) fn ensure_run(conn: &Connection, run_id: &RunId) -> Result<()> {
    let found = conn
        .prepare_cached("SELECT 1 FROM runs WHERE id = ?1")?
        .query_row([run_id.as_str()], |_| Ok(()))
        .optional()?;
    found.ok_or_else(|| run_not_found(run_id))
}

pub(crate) fn run_not_found(run_id: &RunId) -> StoreError {
    StoreError::NotFound {
        what: "run",
        id: run_id.to_string(),
    }
}

fn load_state(conn: &Connection, run_id: &RunId) -> Result<RunState> {
    let text: Option<String> = conn
        .prepare_cached("SELECT state FROM runs WHERE id = ?1")?
        .query_row([run_id.as_str()], |row| row.get(0))
        .optional()?;
    let text = text.ok_or_else(|| run_not_found(run_id))?;
    row::json("runs.state", &text)
}

fn save_state(conn: &Connection, run_id: &RunId, at_ms: i64, state: &RunState) -> Result<()> {
    conn.prepare_cached(
        "UPDATE runs SET status = ?2, iteration = ?3, updated_at_ms = ?4, last_event_seq = ?5, \
         state = ?6 WHERE id = ?1",
    )?
    .execute(params![
        run_id.as_str(),
        state.status.as_str(),
        state.iteration,
        at_ms,
        state.last_event_seq.0,
        serde_json::to_string(state)?,
    ])?;
    Ok(())
}

fn write_iteration(
    conn: &Connection,
    run_id: &RunId,
    at_ms: i64,
    write: &IterationWrite,
) -> Result<()> {
    match write {
        IterationWrite::Start { n } => conn
            .prepare_cached(
                "INSERT INTO iterations (run_id, n, started_at_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (run_id, n) DO UPDATE SET started_at_ms = excluded.started_at_ms, \
                 ended_at_ms = NULL, outcome = NULL, summary = NULL",
            )?
            .execute(params![run_id.as_str(), n, at_ms])?,
        IterationWrite::End {
            n,
            outcome,
            summary,
        } => conn
            .prepare_cached(
                "INSERT INTO iterations (run_id, n, started_at_ms, ended_at_ms, outcome, summary) \
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5) \
                 ON CONFLICT (run_id, n) DO UPDATE SET ended_at_ms = excluded.ended_at_ms, \
                 outcome = excluded.outcome, summary = excluded.summary",
            )?
            .execute(params![
                run_id.as_str(),
                n,
                at_ms,
                outcome.as_str(),
                summary
            ])?,
        IterationWrite::Interrupt { n } => conn
            .prepare_cached(
                "UPDATE iterations SET ended_at_ms = ?3, outcome = 'interrupted' \
                 WHERE run_id = ?1 AND n = ?2 AND outcome IS NULL",
            )?
            .execute(params![run_id.as_str(), n, at_ms])?,
    };
    Ok(())
}

fn fold_iterations(run_id: &RunId, events: &[StoredEvent]) -> BTreeMap<u32, Iteration> {
    let mut state = RunState::default();
    let mut rows = BTreeMap::new();
    for stored in events {
        if let Some(event) = &stored.event {
            for write in iterations::writes_for(&state, event) {
                iterations::apply_write(&mut rows, run_id, stored.at_ms, &write);
            }
        }
        state.apply_stored(stored);
    }
    rows
}

fn all_events(conn: &Connection, run_id: &RunId) -> Result<Vec<StoredEvent>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = ?1 ORDER BY seq"
    ))?;
    let rows = stmt.query_map([run_id.as_str()], raw_event)?;
    rows.map(|raw| decode_event(raw?)).collect()
}

type RawEvent = (i64, Option<String>, i64, String, String);

/// The statement of [`Sqlite::usage_events_before`]: the kinds written in, as the index of these
/// events alone names them (migration 11), so SQLite reads that index.
pub(crate) fn usage_events_sql() -> String {
    format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = ?1 AND seq < ?2 \
         AND kind IN ({}) ORDER BY seq DESC LIMIT ?3",
        usage_kinds_sql()
    )
}

/// A page of events read newest first, decoded and turned oldest first.
fn oldest_first(
    rows: impl Iterator<Item = rusqlite::Result<RawEvent>>,
) -> Result<Vec<StoredEvent>> {
    let mut page = rows
        .map(|raw| decode_event(raw?))
        .collect::<Result<Vec<_>>>()?;
    page.reverse();
    Ok(page)
}

fn raw_event(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawEvent> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
    ))
}

fn decode_event((seq, run_id, at_ms, kind, payload): RawEvent) -> Result<StoredEvent> {
    Ok(StoredEvent {
        seq: Seq(seq),
        run_id: row::parse_opt("events.run_id", run_id)?,
        at_ms,
        event: serde_json::from_str(&payload).ok(),
        payload: row::json("events.payload", &payload)?,
        kind,
    })
}
