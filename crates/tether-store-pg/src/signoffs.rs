//! One sign-off at a time per goal, and who cancelled a goal — per workspace
//! ([`PgStore::scoped`]), as in the embedded store.

use tether_store::{Cancellation, NewCancellation, Reservation, RunId, RunningSignoff};

use crate::error::Result;
use crate::journal::{get, parse};
use crate::store::PgStore;

impl PgStore {
    /// Reserves the next attempt at signing the goal off for `holder`, unless another sign-off
    /// of it is running: a running one whose holder `is_gone` is taken over.
    pub async fn reserve_signoff(
        &self,
        plan_path: &str,
        goal_id: &str,
        holder: &str,
        is_gone: &dyn Fn(&str) -> bool,
    ) -> Result<Reservation> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Two reservations of one goal serialise here, on any machine.
        let lock = tx
            .prepare_cached(
                "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))",
            )
            .await?;
        tx.execute(&lock, &[&self.scope, &plan_path, &goal_id])
            .await?;
        let running = tx
            .prepare_cached(
                "SELECT attempt, holder, started_at_ms FROM signoffs_running \
                 WHERE scope = $1 AND plan_path = $2 AND goal_id = $3",
            )
            .await?;
        if let Some(row) = tx
            .query_opt(&running, &[&self.scope, &plan_path, &goal_id])
            .await?
        {
            let attempt: i64 = get(&row, 0, "signoffs_running.attempt")?;
            let running = RunningSignoff {
                attempt: u32::try_from(attempt).unwrap_or(u32::MAX),
                holder: get(&row, 1, "signoffs_running.holder")?,
                started_at_ms: get(&row, 2, "signoffs_running.started_at_ms")?,
            };
            if !is_gone(&running.holder) {
                tx.commit().await?;
                return Ok(Reservation::Busy(running));
            }
            let delete = tx
                .prepare_cached(
                    "DELETE FROM signoffs_running WHERE scope = $1 AND plan_path = $2 \
                     AND goal_id = $3",
                )
                .await?;
            tx.execute(&delete, &[&self.scope, &plan_path, &goal_id])
                .await?;
        }
        let last = tx
            .prepare_cached(
                "SELECT COALESCE(MAX(attempt), 0)::BIGINT FROM verdicts WHERE scope = $1 \
                 AND plan_path = $2 AND goal_id = $3",
            )
            .await?;
        let last: i64 = tx
            .query_one(&last, &[&self.scope, &plan_path, &goal_id])
            .await?
            .get(0);
        let attempt = last.saturating_add(1);
        let insert = tx
            .prepare_cached(
                "INSERT INTO signoffs_running (scope, plan_path, goal_id, attempt, holder, \
                 started_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .await?;
        tx.execute(
            &insert,
            &[
                &self.scope,
                &plan_path,
                &goal_id,
                &attempt,
                &holder,
                &self.now(),
            ],
        )
        .await?;
        tx.commit().await?;
        Ok(Reservation::Reserved {
            attempt: u32::try_from(attempt).unwrap_or(u32::MAX),
        })
    }

    /// Releases `holder`'s reservation of the goal (if it still has it).
    pub async fn release_signoff(
        &self,
        plan_path: &str,
        goal_id: &str,
        holder: &str,
    ) -> Result<()> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "DELETE FROM signoffs_running WHERE scope = $1 AND plan_path = $2 \
                 AND goal_id = $3 AND holder = $4",
            )
            .await?;
        client
            .execute(&stmt, &[&self.scope, &plan_path, &goal_id, &holder])
            .await?;
        Ok(())
    }

    /// Records who cancelled a goal; returns its id.
    pub async fn record_cancellation(&self, new: &NewCancellation) -> Result<i64> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO cancellations (scope, plan_path, goal_id, by_person, cancelled_by, \
                 reason, run_id, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                 RETURNING id",
            )
            .await?;
        let row = client
            .query_one(
                &stmt,
                &[
                    &self.scope,
                    &new.plan_path,
                    &new.goal_id,
                    &new.by_person,
                    &new.by,
                    &new.reason,
                    &new.run_id.as_ref().map(RunId::as_str),
                    &self.now(),
                ],
            )
            .await
            .map_err(|e| crate::journal::missing_run_or(e, new.run_id.as_ref()))?;
        Ok(row.get(0))
    }

    /// The newest cancellation's id (0 when there is none).
    pub async fn last_cancellation_id(&self) -> Result<i64> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT COALESCE(MAX(id), 0)::BIGINT FROM cancellations",
                &[],
            )
            .await?;
        Ok(row.get(0))
    }

    /// The newest cancellation of the goal of this workspace, if any.
    pub async fn latest_cancellation(
        &self,
        plan_path: &str,
        goal_id: &str,
    ) -> Result<Option<Cancellation>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT id, created_at_ms, plan_path, goal_id, by_person, cancelled_by, reason, \
                 run_id FROM cancellations WHERE scope = $1 AND plan_path = $2 AND goal_id = $3 \
                 ORDER BY id DESC LIMIT 1",
            )
            .await?;
        let Some(row) = client
            .query_opt(&stmt, &[&self.scope, &plan_path, &goal_id])
            .await?
        else {
            return Ok(None);
        };
        let run: Option<String> = get(&row, 7, "cancellations.run_id")?;
        Ok(Some(Cancellation {
            id: get(&row, 0, "cancellations.id")?,
            created_at_ms: get(&row, 1, "cancellations.created_at_ms")?,
            cancel: NewCancellation {
                plan_path: get(&row, 2, "cancellations.plan_path")?,
                goal_id: get(&row, 3, "cancellations.goal_id")?,
                by_person: get(&row, 4, "cancellations.by_person")?,
                by: get(&row, 5, "cancellations.cancelled_by")?,
                reason: get(&row, 6, "cancellations.reason")?,
                run_id: run
                    .map(|id| parse("cancellations.run_id", &id))
                    .transpose()?,
            },
        }))
    }
}
