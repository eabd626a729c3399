//! Runs of many goals in the team store: the rules of the embedded store's `fleets.rs` (one row
//! per run of many goals, one per goal of it in the plan's order), so every machine of a team
//! sees the whole run.

use std::path::PathBuf;

use tether_store::{Event, Fleet, FleetGoal, GoalState, NewFleet, RunId};
use tokio_postgres::Row;

use crate::error::{PgStoreError, Result};
use crate::journal::{append_in, get, limit_of, parse};
use crate::store::PgStore;

pub(crate) const FLEET_COLUMNS: &str = "id, workspace, machine, plan_path, branch, remote, \
                                         budget, parallel, started_at_ms, ended_at_ms, outcome";

impl PgStore {
    /// Records a new run of many goals, every goal `waiting`.
    pub async fn begin_fleet(&self, fleet: &NewFleet) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let workspace = fleet
            .workspace
            .to_str()
            .ok_or_else(|| PgStoreError::NonUtf8Path {
                path: fleet.workspace.clone(),
            })?;
        let insert = tx
            .prepare_cached(
                "INSERT INTO fleets (id, workspace, machine, plan_path, branch, remote, budget, \
                 parallel, started_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .await?;
        tx.execute(
            &insert,
            &[
                &fleet.id.as_str(),
                &workspace,
                &tether_store::this_machine(),
                &fleet.plan_path,
                &fleet.branch,
                &fleet.remote,
                &tether_store::budget_text(fleet.budget.as_ref())
                    .map_err(|e| PgStoreError::corrupt(e.to_string()))?,
                &i64::from(fleet.parallel),
                &now,
            ],
        )
        .await?;
        let goal = tx
            .prepare_cached(
                "INSERT INTO fleet_goals (fleet_id, goal_id, position, after, state, \
                 updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .await?;
        for (position, (id, after)) in fleet.goals.iter().enumerate() {
            let position = i64::try_from(position).unwrap_or(i64::MAX);
            tx.execute(
                &goal,
                &[
                    &fleet.id.as_str(),
                    id,
                    &position,
                    &after.join(","),
                    &GoalState::Waiting.as_str(),
                    &now,
                ],
            )
            .await?;
        }
        let started = Event::FleetStarted {
            fleet_id: fleet.id.clone(),
        };
        append_in(&tx, None, now, &[started]).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records where a goal of a run of many goals stands (and, with `run_id`, which goal run
    /// works on it, on this machine).
    pub async fn set_fleet_goal(
        &self,
        fleet_id: &RunId,
        goal_id: &str,
        state: GoalState,
        run_id: Option<&RunId>,
    ) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let update = tx
            .prepare_cached(
                "UPDATE fleet_goals SET state = $3, run_id = COALESCE($4, run_id), \
                 machine = CASE WHEN $4::TEXT IS NULL THEN machine ELSE $5 END, \
                 updated_at_ms = $6 WHERE fleet_id = $1 AND goal_id = $2",
            )
            .await?;
        let changed = tx
            .execute(
                &update,
                &[
                    &fleet_id.as_str(),
                    &goal_id,
                    &state.as_str(),
                    &run_id.map(RunId::as_str),
                    &tether_store::this_machine(),
                    &now,
                ],
            )
            .await?;
        if changed == 0 {
            return Err(PgStoreError::NotFound {
                what: "goal of a run of many goals",
                id: format!("{fleet_id}/{goal_id}"),
            });
        }
        let moved = Event::FleetGoalMoved {
            fleet_id: fleet_id.clone(),
            goal_id: goal_id.to_owned(),
            state,
        };
        append_in(&tx, None, now, &[moved]).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records that a run of many goals ended, and how.
    pub async fn end_fleet(&self, fleet_id: &RunId, outcome: &str) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let update = tx
            .prepare_cached("UPDATE fleets SET ended_at_ms = $2, outcome = $3 WHERE id = $1")
            .await?;
        let changed = tx
            .execute(&update, &[&fleet_id.as_str(), &now, &outcome])
            .await?;
        if changed == 0 {
            return Err(fleet_not_found(fleet_id));
        }
        let ended = Event::FleetEnded {
            fleet_id: fleet_id.clone(),
            outcome: outcome.to_owned(),
        };
        append_in(&tx, None, now, &[ended]).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The run of many goals `fleet_id`, with its goals.
    pub async fn fleet(&self, fleet_id: &RunId) -> Result<Fleet> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(&format!("SELECT {FLEET_COLUMNS} FROM fleets WHERE id = $1"))
            .await?;
        let row = client
            .query_opt(&select, &[&fleet_id.as_str()])
            .await?
            .ok_or_else(|| fleet_not_found(fleet_id))?;
        let mut fleet = decode_fleet(&row)?;
        fleet.goals = self.fleet_goals(&fleet.id).await?;
        Ok(fleet)
    }

    /// Up to `limit` runs of many goals, newest first.
    pub async fn fleets(&self, limit: usize) -> Result<Vec<Fleet>> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(&format!(
                "SELECT {FLEET_COLUMNS} FROM fleets ORDER BY started_at_ms DESC, id DESC LIMIT $1"
            ))
            .await?;
        let rows = client.query(&select, &[&limit_of(limit)]).await?;
        drop(client);
        let mut fleets = Vec::new();
        for row in &rows {
            let mut fleet = decode_fleet(row)?;
            fleet.goals = self.fleet_goals(&fleet.id).await?;
            fleets.push(fleet);
        }
        Ok(fleets)
    }

    async fn fleet_goals(&self, fleet_id: &RunId) -> Result<Vec<FleetGoal>> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(
                "SELECT goal_id, after, state, run_id, machine, updated_at_ms, renewed_at_ms, \
                 expires_at_ms FROM fleet_goals WHERE fleet_id = $1 ORDER BY position",
            )
            .await?;
        let rows = client.query(&select, &[&fleet_id.as_str()]).await?;
        rows.iter().map(decode_goal).collect()
    }
}

fn decode_fleet(row: &Row) -> Result<Fleet> {
    let id: String = get(row, 0, "fleets.id")?;
    let workspace: String = get(row, 1, "fleets.workspace")?;
    let parallel: i64 = get(row, 7, "fleets.parallel")?;
    let budget: Option<String> = get(row, 6, "fleets.budget")?;
    Ok(Fleet {
        id: parse("fleets.id", &id)?,
        workspace: PathBuf::from(workspace),
        machine: get(row, 2, "fleets.machine")?,
        plan_path: get(row, 3, "fleets.plan_path")?,
        branch: get(row, 4, "fleets.branch")?,
        remote: get(row, 5, "fleets.remote")?,
        budget: budget
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| PgStoreError::corrupt(format!("fleets.budget: {e}")))?,
        parallel: u32::try_from(parallel)
            .map_err(|_| PgStoreError::corrupt(format!("fleets.parallel {parallel}")))?,
        started_at_ms: get(row, 8, "fleets.started_at_ms")?,
        ended_at_ms: get(row, 9, "fleets.ended_at_ms")?,
        outcome: get(row, 10, "fleets.outcome")?,
        goals: Vec::new(),
    })
}

fn decode_goal(row: &Row) -> Result<FleetGoal> {
    let after: String = get(row, 1, "fleet_goals.after")?;
    let state: String = get(row, 2, "fleet_goals.state")?;
    let run_id: Option<String> = get(row, 3, "fleet_goals.run_id")?;
    Ok(FleetGoal {
        goal_id: get(row, 0, "fleet_goals.goal_id")?,
        after: after
            .split(',')
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .collect(),
        state: GoalState::parse(&state)
            .ok_or_else(|| PgStoreError::corrupt(format!("goal state {state:?}")))?,
        run_id: run_id
            .map(|id| parse("fleet_goals.run_id", &id))
            .transpose()?,
        machine: get(row, 4, "fleet_goals.machine")?,
        updated_at_ms: get(row, 5, "fleet_goals.updated_at_ms")?,
        lease: tether_store::GoalLease::of(
            get(row, 6, "fleet_goals.renewed_at_ms")?,
            get(row, 7, "fleet_goals.expires_at_ms")?,
        ),
    })
}

fn fleet_not_found(fleet_id: &RunId) -> PgStoreError {
    PgStoreError::NotFound {
        what: "run of many goals",
        id: fleet_id.to_string(),
    }
}
