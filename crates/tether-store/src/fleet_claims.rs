//! A goal of a run of many goals claimed by a worker (`tether worker`, on any machine with the
//! store): the rules of a run's lease (`leases.rs`) for one goal. A worker **claims** the first
//! goal that is `ready` — or `conflicted` (its merge conflicted: the worker settles it), or
//! whose worker stopped renewing its lease — of the oldest run of many goals going on, for a
//! while; **renews** the lease well before that while it works (a
//! heartbeat); and **reports** the goal's end (signed off and pushed, or ended), which releases
//! it. Every claim draws a new token, greater than the goal's last; a renewal or report whose
//! token is not the goal's live lease is refused with
//! [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) and changes nothing, so a worker that
//! was paused or cut off past its lease cannot report over the worker that took the goal over.
//! Two workers never hold one goal: the team store claims under `FOR UPDATE SKIP LOCKED`, the
//! embedded store under its one writer.

use rusqlite::{OptionalExtension, params};

use crate::error::{Result, StoreError};
use crate::event::Event;
use crate::fleets::{Fleet, GoalState};
use crate::ids::RunId;
use crate::journal::append_in;
use crate::leases::{Holder, Lapse};
use crate::store::Sqlite;

/// A goal a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalClaim {
    /// Its run of many goals (with every goal as the claim left them).
    pub fleet: Fleet,
    /// The goal.
    pub goal_id: String,
    /// Whether the worker settles the goal's conflicting merge (it was `conflicted`, or its
    /// worker lost it while settling) rather than works on the goal.
    pub settle: bool,
    /// The lease's token: present it with every renewal and report.
    pub token: i64,
    /// When the lease lapses unless renewed.
    pub expires_at_ms: i64,
}

impl GoalClaim {
    /// The goal's lease named as a store error names a run's (`<fleet>/<goal>`).
    pub fn lease_name(&self) -> String {
        format!("{}/{}", self.fleet.id, self.goal_id)
    }
}

/// Why `token` does not hold a goal whose lease is (`current`, `expires_at_ms`) at `now`;
/// `None` when it does. Every backend decides a worker's write by this.
pub fn goal_lapse(current: i64, expires_at_ms: i64, token: i64, now: i64) -> Option<Lapse> {
    if current == 0 {
        Some(Lapse::Unclaimed)
    } else if current != token {
        Some(Lapse::TakenOver)
    } else if expires_at_ms == 0 {
        Some(Lapse::Released)
    } else if expires_at_ms <= now {
        Some(Lapse::Expired)
    } else {
        None
    }
}

/// The condition a goal row (`g`) of a run of many goals going on (`f`) meets when a worker may
/// claim it at `now` (the first parameter).
pub(crate) const CLAIMABLE: &str = "f.ended_at_ms IS NULL AND f.remote IS NOT NULL AND \
     (g.state IN ('ready', 'conflicted') OR (g.state IN ('working', 'settling') AND \
     g.token > 0 AND g.expires_at_ms > 0 AND g.expires_at_ms <= ?1))";

/// Whether a goal claimed in `state` is one to settle.
pub fn settles(state: &str) -> bool {
    matches!(state, "conflicted" | "settling")
}

impl Sqlite {
    pub fn claim_fleet_goal(&self, holder: &Holder, ttl_ms: i64) -> Result<Option<GoalClaim>> {
        let tx = self.write()?;
        let now = self.now();
        let found = tx
            .prepare_cached(&format!(
                "SELECT g.fleet_id, g.goal_id, g.token, g.state FROM fleet_goals g \
                 JOIN fleets f ON f.id = g.fleet_id WHERE {CLAIMABLE} \
                 ORDER BY f.started_at_ms, f.id, g.position LIMIT 1"
            ))?
            .query_row([now], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .optional()?;
        let Some((fleet_id, goal_id, last, was)) = found else {
            return Ok(None);
        };
        let settle = settles(&was);
        let state = if settle {
            GoalState::Settling
        } else {
            GoalState::Working
        };
        let fleet_id: RunId = crate::row::parse("fleet_goals.fleet_id", &fleet_id)?;
        let token = last.saturating_add(1);
        let expires_at_ms = now.saturating_add(ttl_ms);
        tx.prepare_cached(
            "UPDATE fleet_goals SET state = ?3, machine = ?4, token = ?5, expires_at_ms = ?6, \
             renewed_at_ms = ?7, updated_at_ms = ?7 WHERE fleet_id = ?1 AND goal_id = ?2",
        )?
        .execute(params![
            fleet_id.as_str(),
            goal_id,
            state.as_str(),
            holder.machine,
            token,
            expires_at_ms,
            now
        ])?;
        let moved = Event::FleetGoalMoved {
            fleet_id: fleet_id.clone(),
            goal_id: goal_id.clone(),
            state,
        };
        append_in(&tx, None, now, &[moved])?;
        tx.commit()?;
        Ok(Some(GoalClaim {
            fleet: self.fleet(&fleet_id)?,
            goal_id,
            settle,
            token,
            expires_at_ms,
        }))
    }

    pub fn renew_fleet_goal(
        &self,
        fleet_id: &RunId,
        goal_id: &str,
        token: i64,
        ttl_ms: i64,
    ) -> Result<i64> {
        let tx = self.write()?;
        let now = self.now();
        held(&tx, (fleet_id, goal_id), token, now)?;
        let expires_at_ms = now.saturating_add(ttl_ms);
        tx.prepare_cached(
            "UPDATE fleet_goals SET expires_at_ms = ?3, renewed_at_ms = ?4 \
             WHERE fleet_id = ?1 AND goal_id = ?2",
        )?
        .execute(params![fleet_id.as_str(), goal_id, expires_at_ms, now])?;
        tx.commit()?;
        Ok(expires_at_ms)
    }

    pub fn report_fleet_goal(
        &self,
        fleet_id: &RunId,
        goal_id: &str,
        token: i64,
        state: GoalState,
        run_id: Option<&RunId>,
    ) -> Result<()> {
        let tx = self.write()?;
        let now = self.now();
        held(&tx, (fleet_id, goal_id), token, now)?;
        // Working on it (or settling it): the lease goes on; any other state ends the worker's
        // part.
        let release = !matches!(state, GoalState::Working | GoalState::Settling);
        tx.prepare_cached(
            "UPDATE fleet_goals SET state = ?3, run_id = COALESCE(?4, run_id), \
             expires_at_ms = CASE WHEN ?5 THEN 0 ELSE expires_at_ms END, updated_at_ms = ?6 \
             WHERE fleet_id = ?1 AND goal_id = ?2",
        )?
        .execute(params![
            fleet_id.as_str(),
            goal_id,
            state.as_str(),
            run_id.map(RunId::as_str),
            release,
            now
        ])?;
        let moved = Event::FleetGoalMoved {
            fleet_id: fleet_id.clone(),
            goal_id: goal_id.to_owned(),
            state,
        };
        append_in(&tx, None, now, &[moved])?;
        tx.commit()?;
        Ok(())
    }
}

/// Refuses, in `tx`, unless `token` holds the goal's live lease at `now`.
fn held(
    tx: &rusqlite::Transaction<'_>,
    (fleet_id, goal_id): (&RunId, &str),
    token: i64,
    now: i64,
) -> Result<()> {
    let row = tx
        .prepare_cached(
            "SELECT token, expires_at_ms FROM fleet_goals WHERE fleet_id = ?1 AND goal_id = ?2",
        )?
        .query_row(params![fleet_id.as_str(), goal_id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
        })
        .optional()?;
    let name = format!("{fleet_id}/{goal_id}");
    let Some((current, expires_at_ms)) = row else {
        return Err(StoreError::NotFound {
            what: "goal of a run of many goals",
            id: name,
        });
    };
    match goal_lapse(current, expires_at_ms, token, now) {
        None => Ok(()),
        Some(lapse) => Err(StoreError::LeaseLost {
            run: name,
            token,
            lapse,
        }),
    }
}
