//! A goal of a run of many goals claimed by a worker, in the team store: the rules of the
//! embedded store's `fleet_claims.rs`, with the goal's row found under `FOR UPDATE SKIP LOCKED`
//! (workers on many machines claim at once without waiting on each other or taking one goal
//! twice) and locked (`FOR UPDATE`) for each renewal and report.

use tether_store::{Event, GoalClaim, GoalState, RunId, goal_lapse, settles};

use crate::conn::Conn;
use crate::error::{PgStoreError, Result};
use crate::journal::{append_in, get, parse};
use crate::store::PgStore;

impl PgStore {
    /// Claims for `holder`, for `ttl_ms`, the first goal a worker may take, if any.
    pub async fn claim_fleet_goal(
        &self,
        holder: &tether_store::Holder,
        ttl_ms: i64,
    ) -> Result<Option<GoalClaim>> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let select = tx
            .prepare_cached(
                "SELECT g.fleet_id, g.goal_id, g.token, g.state FROM fleet_goals g \
                 JOIN fleets f ON f.id = g.fleet_id \
                 WHERE f.ended_at_ms IS NULL AND f.remote IS NOT NULL AND \
                 (g.state IN ('ready', 'conflicted') OR (g.state IN ('working', 'settling') \
                 AND g.token > 0 AND g.expires_at_ms > 0 AND g.expires_at_ms <= $1)) \
                 ORDER BY f.started_at_ms, f.id, g.position LIMIT 1 \
                 FOR UPDATE OF g SKIP LOCKED",
            )
            .await?;
        let Some(row) = tx.query_opt(&select, &[&now]).await? else {
            return Ok(None);
        };
        let fleet_id: String = get(&row, 0, "fleet_goals.fleet_id")?;
        let fleet_id: RunId = parse("fleet_goals.fleet_id", &fleet_id)?;
        let goal_id: String = get(&row, 1, "fleet_goals.goal_id")?;
        let last: i64 = get(&row, 2, "fleet_goals.token")?;
        let was: String = get(&row, 3, "fleet_goals.state")?;
        let settle = settles(&was);
        let state = if settle {
            GoalState::Settling
        } else {
            GoalState::Working
        };
        let token = last.saturating_add(1);
        let expires_at_ms = now.saturating_add(ttl_ms);
        let update = tx
            .prepare_cached(
                "UPDATE fleet_goals SET state = $3, machine = $4, token = $5, \
                 expires_at_ms = $6, renewed_at_ms = $7, updated_at_ms = $7 \
                 WHERE fleet_id = $1 AND goal_id = $2",
            )
            .await?;
        tx.execute(
            &update,
            &[
                &fleet_id.as_str(),
                &goal_id,
                &state.as_str(),
                &holder.machine,
                &token,
                &expires_at_ms,
                &now,
            ],
        )
        .await?;
        let moved = Event::FleetGoalMoved {
            fleet_id: fleet_id.clone(),
            goal_id: goal_id.clone(),
            state,
        };
        append_in(&tx, None, now, &[moved]).await?;
        tx.commit().await?;
        drop(client);
        Ok(Some(GoalClaim {
            fleet: self.fleet(&fleet_id).await?,
            goal_id,
            settle,
            token,
            expires_at_ms,
        }))
    }

    /// Extends the goal's lease `token` holds, while it does.
    pub async fn renew_fleet_goal(
        &self,
        fleet_id: &RunId,
        goal_id: &str,
        token: i64,
        ttl_ms: i64,
    ) -> Result<i64> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        held(&tx, (fleet_id, goal_id), token, now).await?;
        let expires_at_ms = now.saturating_add(ttl_ms);
        let update = tx
            .prepare_cached(
                "UPDATE fleet_goals SET expires_at_ms = $3, renewed_at_ms = $4 \
                 WHERE fleet_id = $1 AND goal_id = $2",
            )
            .await?;
        tx.execute(
            &update,
            &[&fleet_id.as_str(), &goal_id, &expires_at_ms, &now],
        )
        .await?;
        tx.commit().await?;
        Ok(expires_at_ms)
    }

    /// The worker holding the goal's lease reports where it stands.
    pub async fn report_fleet_goal(
        &self,
        fleet_id: &RunId,
        goal_id: &str,
        token: i64,
        state: GoalState,
        run_id: Option<&RunId>,
    ) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        held(&tx, (fleet_id, goal_id), token, now).await?;
        let release = !matches!(state, GoalState::Working | GoalState::Settling);
        let update = tx
            .prepare_cached(
                "UPDATE fleet_goals SET state = $3, run_id = COALESCE($4, run_id), \
                 expires_at_ms = CASE WHEN $5 THEN 0 ELSE expires_at_ms END, \
                 updated_at_ms = $6 WHERE fleet_id = $1 AND goal_id = $2",
            )
            .await?;
        tx.execute(
            &update,
            &[
                &fleet_id.as_str(),
                &goal_id,
                &state.as_str(),
                &run_id.map(RunId::as_str),
                &release,
                &now,
            ],
        )
        .await?;
        let moved = Event::FleetGoalMoved {
            fleet_id: fleet_id.clone(),
            goal_id: goal_id.to_owned(),
            state,
        };
        append_in(&tx, None, now, &[moved]).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Refuses, in `tx` (the goal's row locked until it ends), unless `token` holds its live lease
/// at `now`.
async fn held(
    tx: &impl Conn,
    (fleet_id, goal_id): (&RunId, &str),
    token: i64,
    now: i64,
) -> Result<()> {
    let lock = tx
        .prepare_cached(
            "SELECT token, expires_at_ms FROM fleet_goals WHERE fleet_id = $1 AND goal_id = $2 \
             FOR UPDATE",
        )
        .await?;
    let name = format!("{fleet_id}/{goal_id}");
    let Some(row) = tx.query_opt(&lock, &[&fleet_id.as_str(), &goal_id]).await? else {
        return Err(PgStoreError::NotFound {
            what: "goal of a run of many goals",
            id: name,
        });
    };
    let current: i64 = get(&row, 0, "fleet_goals.token")?;
    let expires_at_ms: i64 = get(&row, 1, "fleet_goals.expires_at_ms")?;
    match goal_lapse(current, expires_at_ms, token, now) {
        None => Ok(()),
        Some(lapse) => Err(PgStoreError::LeaseLost {
            run: name,
            token,
            lapse,
        }),
    }
}
