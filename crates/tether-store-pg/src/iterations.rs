//! The `iterations` rows: one per iteration of a run, projected from its events in the same
//! transaction as each event (the writes come from `tether_store::writes_for`, shared with the
//! embedded store, so both project iterations alike), and rebuilt from the journal on demand.

use std::collections::BTreeMap;

use tether_store::{Iteration, IterationWrite, RunId, RunState, StoredEvent};
use tokio_postgres::Row;

use crate::error::{PgStoreError, Result};
use crate::journal::{EVENT_COLUMNS, decode_event, get, load_state, parse, save_state};
use crate::store::PgStore;

type Tx<'a> = deadpool_postgres::Transaction<'a>;

impl PgStore {
    /// The run's `iterations` rows, ordered by iteration number.
    pub async fn iterations(&self, run_id: &RunId) -> Result<Vec<Iteration>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT run_id, n, started_at_ms, ended_at_ms, outcome, summary FROM iterations \
                 WHERE run_id = $1 ORDER BY n",
            )
            .await?;
        let rows = client.query(&stmt, &[&run_id.as_str()]).await?;
        rows.iter().map(decode_iteration).collect()
    }

    /// The run's iteration rows as the journal says they should be, ignoring the stored ones.
    pub async fn rebuild_iterations(&self, run_id: &RunId) -> Result<Vec<Iteration>> {
        let events = self.whole_journal(run_id).await?;
        Ok(fold_iterations(run_id, &events).into_values().collect())
    }

    /// The run's whole journal, oldest first, read in one snapshot ([`crate::PgStoreError`]
    /// `NotFound` for an unknown run).
    pub(crate) async fn whole_journal(&self, run_id: &RunId) -> Result<Vec<StoredEvent>> {
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        load_state(&tx, run_id, false).await?;
        let events = all_events(&tx, run_id).await?;
        tx.commit().await?;
        Ok(events)
    }

    /// Rewrites the run's projections (`runs` row and `iterations` rows) from its journal.
    pub async fn refresh_projection(&self, run_id: &RunId) -> Result<RunState> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        load_state(&tx, run_id, true).await?;
        let events = all_events(&tx, run_id).await?;
        let state = RunState::from_events(&events);
        let delete = tx
            .prepare_cached("DELETE FROM iterations WHERE run_id = $1")
            .await?;
        tx.execute(&delete, &[&run_id.as_str()]).await?;
        let insert = tx
            .prepare_cached(
                "INSERT INTO iterations (run_id, n, started_at_ms, ended_at_ms, outcome, \
                 summary) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .await?;
        for row in fold_iterations(run_id, &events).values() {
            tx.execute(
                &insert,
                &[
                    &run_id.as_str(),
                    &i64::from(row.n),
                    &row.started_at_ms,
                    &row.ended_at_ms,
                    &row.outcome.map(|o| o.as_str()),
                    &row.summary,
                ],
            )
            .await?;
        }
        let updated_at = state.last_event_at_ms.unwrap_or_else(|| self.now());
        save_state(&tx, run_id, updated_at, &state).await?;
        tx.commit().await?;
        Ok(state)
    }
}

/// Applies one write to the run's rows inside the append's transaction.
pub(crate) async fn write_iteration(
    tx: &impl crate::conn::Conn,
    run_id: &RunId,
    at_ms: i64,
    write: &IterationWrite,
) -> Result<()> {
    match write {
        IterationWrite::Start { n } => {
            let stmt = tx
                .prepare_cached(
                    "INSERT INTO iterations (run_id, n, started_at_ms) VALUES ($1, $2, $3) \
                     ON CONFLICT (run_id, n) DO UPDATE SET \
                     started_at_ms = excluded.started_at_ms, ended_at_ms = NULL, \
                     outcome = NULL, summary = NULL",
                )
                .await?;
            tx.execute(&stmt, &[&run_id.as_str(), &i64::from(*n), &at_ms])
                .await?;
        }
        IterationWrite::End {
            n,
            outcome,
            summary,
        } => {
            let stmt = tx
                .prepare_cached(
                    "INSERT INTO iterations (run_id, n, started_at_ms, ended_at_ms, outcome, \
                     summary) VALUES ($1, $2, $3, $3, $4, $5) \
                     ON CONFLICT (run_id, n) DO UPDATE SET ended_at_ms = excluded.ended_at_ms, \
                     outcome = excluded.outcome, summary = excluded.summary",
                )
                .await?;
            tx.execute(
                &stmt,
                &[
                    &run_id.as_str(),
                    &i64::from(*n),
                    &at_ms,
                    &outcome.as_str(),
                    summary,
                ],
            )
            .await?;
        }
        IterationWrite::Interrupt { n } => {
            let stmt = tx
                .prepare_cached(
                    "UPDATE iterations SET ended_at_ms = $3, outcome = 'interrupted' \
                     WHERE run_id = $1 AND n = $2 AND outcome IS NULL",
                )
                .await?;
            tx.execute(&stmt, &[&run_id.as_str(), &i64::from(*n), &at_ms])
                .await?;
        }
    }
    Ok(())
}

/// The rows the journal implies, by iteration number.
pub(crate) fn fold_iterations(run_id: &RunId, events: &[StoredEvent]) -> BTreeMap<u32, Iteration> {
    let mut state = RunState::default();
    let mut rows = BTreeMap::new();
    for stored in events {
        if let Some(event) = &stored.event {
            for write in tether_store::writes_for(&state, event) {
                tether_store::apply_write(&mut rows, run_id, stored.at_ms, &write);
            }
        }
        state.apply_stored(stored);
    }
    rows
}

/// The run's whole journal, oldest first.
pub(crate) async fn all_events(tx: &Tx<'_>, run_id: &RunId) -> Result<Vec<StoredEvent>> {
    let stmt = tx
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = $1 ORDER BY seq"
        ))
        .await?;
    let rows = tx.query(&stmt, &[&run_id.as_str()]).await?;
    rows.iter().map(decode_event).collect()
}

fn decode_iteration(row: &Row) -> Result<Iteration> {
    let n: i64 = get(row, 1, "iterations.n")?;
    let outcome: Option<String> = get(row, 4, "iterations.outcome")?;
    Ok(Iteration {
        run_id: parse("iterations.run_id", get(row, 0, "iterations.run_id")?)?,
        n: u32::try_from(n)
            .map_err(|_| PgStoreError::corrupt(format!("column iterations.n: {n}")))?,
        started_at_ms: get(row, 2, "iterations.started_at_ms")?,
        ended_at_ms: get(row, 3, "iterations.ended_at_ms")?,
        outcome: outcome
            .map(|o| parse("iterations.outcome", &o))
            .transpose()?,
        summary: get(row, 5, "iterations.summary")?,
    })
}
