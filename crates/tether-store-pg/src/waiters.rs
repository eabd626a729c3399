//! Whether anyone still waits for a pending question (`question_abandoned` and
//! `question_awaited` events), as in the embedded store; and the store's change counter.

use tether_store::{Abandoned, Event, Question, QuestionId, QuestionStatus, RunId};

use crate::error::{PgStoreError, Result};
use crate::journal::append_in;
use crate::questions::load_question;
use crate::store::PgStore;

type Tx<'a> = deadpool_postgres::Transaction<'a>;

impl PgStore {
    /// Records that nobody waits for the pending question `id` any more; `false` (changing
    /// nothing) when it is no longer pending or was already abandoned.
    pub async fn abandon_question(&self, id: &QuestionId, reason: &str) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let question = load_question(&tx, id).await?;
        let open = question.status == QuestionStatus::Pending
            && latest(&tx, question.run_id.as_ref(), id)
                .await?
                .is_none_or(|a| a.is_none());
        if open {
            let event = Event::QuestionAbandoned {
                question_id: id.clone(),
                reason: reason.to_owned(),
            };
            append_in(&tx, question.run_id.as_ref(), self.now(), &[event]).await?;
        }
        tx.commit().await?;
        Ok(open)
    }

    /// Records that someone waits for `id` again, if it was abandoned; returns whether it was.
    pub async fn await_question(&self, id: &QuestionId) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let question = load_question(&tx, id).await?;
        let abandoned = question.status == QuestionStatus::Pending
            && latest(&tx, question.run_id.as_ref(), id)
                .await?
                .is_some_and(|a| a.is_some());
        if abandoned {
            let event = Event::QuestionAwaited {
                question_id: id.clone(),
            };
            append_in(&tx, question.run_id.as_ref(), self.now(), &[event]).await?;
        }
        tx.commit().await?;
        Ok(abandoned)
    }

    /// Whether nobody waits for the pending `question`, and since when.
    pub async fn abandoned(&self, question: &Question) -> Result<Option<Abandoned>> {
        if question.status != QuestionStatus::Pending {
            return Ok(None);
        }
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let found = latest(&tx, question.run_id.as_ref(), &question.id).await?;
        tx.commit().await?;
        Ok(found.flatten())
    }

    /// A number that changes whenever anyone commits a change: the journal's newest committed
    /// seq (every change — a run's event, a question asked or answered, a verdict — appends an
    /// event). Read without the journal's lock: it need only change, not be a resume point.
    pub async fn data_version(&self) -> Result<i64> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT COALESCE(MAX(seq), 0) FROM events", &[])
            .await?;
        Ok(row.get(0))
    }

    /// Checks that every run's projection names its journal's last event.
    pub async fn check_integrity(&self) -> Result<()> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT r.id FROM runs r LEFT JOIN (SELECT run_id, MAX(seq) AS seq FROM events \
                 GROUP BY run_id) e ON e.run_id = r.id \
                 WHERE r.last_event_seq <> COALESCE(e.seq, 0) ORDER BY r.id LIMIT 10",
                &[],
            )
            .await?;
        if rows.is_empty() {
            return Ok(());
        }
        let ids: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        Err(PgStoreError::corrupt(format!(
            "the projection of runs {} does not match their journal",
            ids.join(", ")
        )))
    }
}

/// The newest `question_abandoned` or `question_awaited` event of question `id`: what it says if
/// it is an abandonment, `None` if someone waits again.
async fn latest(
    tx: &Tx<'_>,
    run: Option<&RunId>,
    id: &QuestionId,
) -> Result<Option<Option<Abandoned>>> {
    let stmt = tx
        .prepare_cached(
            "SELECT at_ms, payload FROM events WHERE run_id IS NOT DISTINCT FROM $1 \
             AND kind IN ('question_abandoned', 'question_awaited') \
             AND payload->>'question_id' = $2 ORDER BY seq DESC LIMIT 1",
        )
        .await?;
    let Some(row) = tx
        .query_opt(&stmt, &[&run.map(RunId::as_str), &id.as_str()])
        .await?
    else {
        return Ok(None);
    };
    let at_ms: i64 = row.get(0);
    let payload: serde_json::Value = row.get(1);
    let abandoned = match serde_json::from_value::<Event>(payload) {
        Ok(Event::QuestionAbandoned { reason, .. }) => Some(Abandoned { at_ms, reason }),
        _ => None,
    };
    Ok(Some(abandoned))
}
