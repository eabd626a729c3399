//! Goals on a schedule in the team store: the rules of the embedded store's `schedules.rs`,
//! every fire claimed with one conditional `UPDATE` (the fire token still the one its
//! scheduler read), so schedulers on many machines never fire one schedule twice, and the
//! schedule's row locked (`FOR UPDATE`) for each renewal and end. Every token is the next value
//! of the sequence `schedule_fire_tokens`, so none comes again, even for a schedule removed and
//! added again under its name.

use std::path::{Path, PathBuf};

use tether_store::{
    FireClaim, FireEnd, FireEnded, Holder, NewSchedule, SCHEDULE_COLUMNS, Schedule, StoreError,
    count_failure, fire_lapse, fire_name,
};
use tokio_postgres::Row;

use crate::conn::Conn;
use crate::error::{PgStoreError, Result};
use crate::journal::{get, parse};
use crate::store::PgStore;

fn path_text(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| PgStoreError::NonUtf8Path {
        path: path.to_owned(),
    })
}

fn not_found(name: &str) -> PgStoreError {
    PgStoreError::NotFound {
        what: "schedule",
        id: name.to_owned(),
    }
}

fn schedule_of(row: &Row) -> Result<Schedule> {
    let workspace: String = get(row, 0, "schedules.workspace")?;
    let work: String = get(row, 3, "schedules.work")?;
    let last_run: Option<String> = get(row, 10, "schedules.last_run_id")?;
    let failures: i64 = get(row, 12, "schedules.failures")?;
    Ok(Schedule {
        workspace: PathBuf::from(workspace),
        name: get(row, 1, "schedules.name")?,
        timing: get(row, 2, "schedules.timing")?,
        work: serde_json::from_str(&work)
            .map_err(|e| PgStoreError::corrupt(format!("column schedules.work: {e}")))?,
        paused: get::<i64>(row, 4, "schedules.paused")? != 0,
        created_at_ms: get(row, 5, "schedules.created_at_ms")?,
        fire: get(row, 6, "schedules.fire")?,
        expires_at_ms: get(row, 7, "schedules.expires_at_ms")?,
        machine: get(row, 8, "schedules.machine")?,
        last_fire_ms: get(row, 9, "schedules.last_fire_ms")?,
        last_run: last_run
            .map(|id| parse("schedules.last_run_id", &id))
            .transpose()?,
        last_outcome: get(row, 11, "schedules.last_outcome")?,
        failures: u32::try_from(failures).unwrap_or(u32::MAX),
        overdue_at_ms: get(row, 13, "schedules.overdue_at_ms")?,
        resumed_at_ms: get(row, 14, "schedules.resumed_at_ms")?,
    })
}

/// The schedule `name` of `workspace`, its row locked until `tx` ends.
async fn locked(tx: &impl Conn, workspace: &str, name: &str) -> Result<Schedule> {
    let select = tx
        .prepare_cached(&format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE workspace = $1 AND name = $2 \
             FOR UPDATE"
        ))
        .await?;
    let row = tx
        .query_opt(&select, &[&workspace, &name])
        .await?
        .ok_or_else(|| not_found(name))?;
    schedule_of(&row)
}

/// Refuses unless `token` holds `schedule`'s fire going on.
fn held(schedule: &Schedule, token: i64) -> Result<()> {
    match fire_lapse(schedule.fire, schedule.expires_at_ms, token) {
        None => Ok(()),
        Some(lapse) => Err(PgStoreError::LeaseLost {
            run: fire_name(&schedule.name),
            token,
            lapse,
        }),
    }
}

impl PgStore {
    /// Adds a schedule; `false` when its workspace has one of that name.
    pub async fn add_schedule(&self, new: &NewSchedule) -> Result<bool> {
        let client = self.client().await?;
        let work = serde_json::to_string(&new.work)
            .map_err(|e| PgStoreError::corrupt(StoreError::Json(e).to_string()))?;
        let insert = client
            .prepare_cached(
                "INSERT INTO schedules (workspace, name, timing, work, created_at_ms, fire) \
                 VALUES ($1, $2, $3, $4, $5, nextval('schedule_fire_tokens')) \
                 ON CONFLICT (workspace, name) DO NOTHING",
            )
            .await?;
        let added = client
            .execute(
                &insert,
                &[
                    &path_text(&new.workspace)?,
                    &new.name,
                    &new.timing,
                    &work,
                    &self.now(),
                ],
            )
            .await?;
        Ok(added == 1)
    }

    /// The schedules of `workspace`, by name.
    pub async fn schedules(&self, workspace: &Path) -> Result<Vec<Schedule>> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(&format!(
                "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE workspace = $1 ORDER BY name"
            ))
            .await?;
        let rows = client.query(&select, &[&path_text(workspace)?]).await?;
        rows.iter().map(schedule_of).collect()
    }

    /// The schedule `name` of `workspace`.
    pub async fn schedule(&self, workspace: &Path, name: &str) -> Result<Schedule> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(&format!(
                "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE workspace = $1 AND name = $2"
            ))
            .await?;
        let row = client
            .query_opt(&select, &[&path_text(workspace)?, &name])
            .await?
            .ok_or_else(|| not_found(name))?;
        schedule_of(&row)
    }

    /// Removes the schedule; whether there was one.
    pub async fn remove_schedule(&self, workspace: &Path, name: &str) -> Result<bool> {
        let client = self.client().await?;
        let delete = client
            .prepare_cached("DELETE FROM schedules WHERE workspace = $1 AND name = $2")
            .await?;
        let removed = client
            .execute(&delete, &[&path_text(workspace)?, &name])
            .await?;
        Ok(removed == 1)
    }

    /// Pauses or resumes the schedule; whether there is one.
    pub async fn pause_schedule(&self, workspace: &Path, name: &str, paused: bool) -> Result<bool> {
        let client = self.client().await?;
        let update = client
            .prepare_cached(
                "UPDATE schedules SET paused = CASE WHEN $3 THEN 1 ELSE 0 END, \
                 failures = CASE WHEN $3 THEN failures ELSE 0 END, \
                 overdue_at_ms = CASE WHEN $3 THEN overdue_at_ms ELSE NULL END, \
                 resumed_at_ms = CASE WHEN NOT $3 AND paused = 1 THEN $4 \
                 ELSE resumed_at_ms END \
                 WHERE workspace = $1 AND name = $2",
            )
            .await?;
        let changed = client
            .execute(
                &update,
                &[&path_text(workspace)?, &name, &paused, &self.now()],
            )
            .await?;
        Ok(changed == 1)
    }

    /// Claims the schedule's next fire, if it is still the one `seen` and may fire.
    pub async fn claim_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        seen: i64,
        at_ms: i64,
        holder: &Holder,
        ttl_ms: i64,
    ) -> Result<Option<FireClaim>> {
        let client = self.client().await?;
        let now = self.now();
        let expires_at_ms = now.saturating_add(ttl_ms);
        let update = client
            .prepare_cached(
                "UPDATE schedules SET fire = nextval('schedule_fire_tokens'), \
                 expires_at_ms = $4, machine = $5, \
                 last_fire_ms = $6, last_run_id = NULL, last_outcome = NULL, \
                 overdue_at_ms = NULL \
                 WHERE workspace = $1 AND name = $2 AND fire = $3 AND paused = 0 \
                 AND expires_at_ms <= $7 \
                 RETURNING fire",
            )
            .await?;
        let claimed = client
            .query_opt(
                &update,
                &[
                    &path_text(workspace)?,
                    &name,
                    &seen,
                    &expires_at_ms,
                    &holder.machine,
                    &at_ms,
                    &now,
                ],
            )
            .await?;
        claimed
            .map(|row| {
                Ok(FireClaim {
                    token: get(&row, 0, "schedules.fire")?,
                    expires_at_ms,
                })
            })
            .transpose()
    }

    /// Extends the lease of the fire `token` holds.
    pub async fn renew_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        token: i64,
        ttl_ms: i64,
    ) -> Result<i64> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let workspace = path_text(workspace)?;
        held(&locked(&tx, workspace, name).await?, token)?;
        let expires_at_ms = self.now().saturating_add(ttl_ms);
        let update = tx
            .prepare_cached(
                "UPDATE schedules SET expires_at_ms = $3 WHERE workspace = $1 AND name = $2",
            )
            .await?;
        tx.execute(&update, &[&workspace, &name, &expires_at_ms])
            .await?;
        tx.commit().await?;
        Ok(expires_at_ms)
    }

    /// Records the run of the fire `token` holds.
    pub async fn start_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        token: i64,
        run: &tether_store::RunId,
    ) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let workspace = path_text(workspace)?;
        held(&locked(&tx, workspace, name).await?, token)?;
        let update = tx
            .prepare_cached(
                "UPDATE schedules SET last_run_id = $3 WHERE workspace = $1 AND name = $2",
            )
            .await?;
        tx.execute(&update, &[&workspace, &name, &run.as_str()])
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records a lapsed fire that never ended as abandoned.
    pub async fn abandon_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        seen: i64,
        run: Option<&tether_store::RunId>,
        outcome: &str,
    ) -> Result<bool> {
        let client = self.client().await?;
        let update = client
            .prepare_cached(
                "UPDATE schedules SET expires_at_ms = 0, last_outcome = $5 \
                 WHERE workspace = $1 AND name = $2 AND fire = $3 \
                 AND last_run_id IS NOT DISTINCT FROM $4 \
                 AND expires_at_ms > 0 AND expires_at_ms <= $6",
            )
            .await?;
        let abandoned = client
            .execute(
                &update,
                &[
                    &path_text(workspace)?,
                    &name,
                    &seen,
                    &run.map(tether_store::RunId::as_str),
                    &outcome,
                    &self.now(),
                ],
            )
            .await?;
        Ok(abandoned == 1)
    }

    /// Ends the fire `token` holds, counting a failure.
    pub async fn end_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        token: i64,
        end: &FireEnd,
        pause_after: u32,
    ) -> Result<FireEnded> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let workspace = path_text(workspace)?;
        let found = locked(&tx, workspace, name).await?;
        held(&found, token)?;
        let (failures, pauses) = count_failure(found.failures, end.done, pause_after);
        let update = tx
            .prepare_cached(
                "UPDATE schedules SET expires_at_ms = 0, last_run_id = $3, last_outcome = $4, \
                 failures = $5, paused = CASE WHEN $6 THEN 1 ELSE paused END \
                 WHERE workspace = $1 AND name = $2",
            )
            .await?;
        tx.execute(
            &update,
            &[
                &workspace,
                &name,
                &end.run.as_ref().map(tether_store::RunId::as_str),
                &end.outcome,
                &i64::from(failures),
                &pauses,
            ],
        )
        .await?;
        tx.commit().await?;
        Ok(FireEnded {
            failures,
            paused_now: pauses && !found.paused,
        })
    }

    /// Marks the schedule overdue, once per spell.
    pub async fn mark_schedule_overdue(
        &self,
        workspace: &Path,
        name: &str,
        seen: i64,
        at_ms: i64,
    ) -> Result<bool> {
        let client = self.client().await?;
        let update = client
            .prepare_cached(
                "UPDATE schedules SET overdue_at_ms = $4 WHERE workspace = $1 AND name = $2 \
                 AND fire = $3 AND paused = 0 AND overdue_at_ms IS NULL",
            )
            .await?;
        let marked = client
            .execute(&update, &[&path_text(workspace)?, &name, &seen, &at_ms])
            .await?;
        Ok(marked == 1)
    }
}
