//! Runs of many goals (`tether run --parallel`) as the store records them: the run, and where
//! each of its goals stands, so `tether status`, the dashboard and a team's other machines see
//! the whole run, not only each goal's own run.
//!
//! The process coordinating the run writes it: [`crate::Store::begin_fleet`] once, every goal
//! `waiting`; [`crate::Store::set_fleet_goal`] as each goal moves (with the goal run working on
//! it, and this machine); [`crate::Store::end_fleet`] with how it ended. Each goal's own run is
//! an ordinary run beside it. Each of the three writes a journal event of no run in the same
//! transaction (`fleet_started`, `fleet_goal_moved`, `fleet_ended`), so live pages and other
//! machines hear of it as of any change.

use std::path::PathBuf;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::event::Event;
use crate::ids::RunId;
use crate::journal::append_in;
use crate::store::Sqlite;

/// Where one goal of a run of many goals stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalState {
    /// Some goal in its `after:` is not merged yet.
    Waiting,
    /// Ready for a worker to claim it (a run of many goals on many machines).
    Ready,
    /// Its agent works on it.
    Working,
    /// Its merge conflicted: ready for a worker to settle it (a run of many goals on many
    /// machines).
    Conflicted,
    /// Its agent settles its conflicting merge.
    Settling,
    /// Signed off; its merge comes.
    SignedOff,
    /// Its work is in the run's branch.
    Merged,
    /// Its merges kept conflicting: a person decides.
    NeedsPerson,
    /// It ended without a sign-off (failed, cancelled, out of budget), or the run stopped.
    Ended,
}

impl GoalState {
    /// Every state.
    pub const ALL: [GoalState; 9] = [
        GoalState::Waiting,
        GoalState::Ready,
        GoalState::Working,
        GoalState::Conflicted,
        GoalState::Settling,
        GoalState::SignedOff,
        GoalState::Merged,
        GoalState::NeedsPerson,
        GoalState::Ended,
    ];

    /// Its name in the store and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalState::Waiting => "waiting",
            GoalState::Ready => "ready",
            GoalState::Working => "working",
            GoalState::Conflicted => "conflicted",
            GoalState::Settling => "settling",
            GoalState::SignedOff => "signed_off",
            GoalState::Merged => "merged",
            GoalState::NeedsPerson => "needs_person",
            GoalState::Ended => "ended",
        }
    }

    /// The state named `name`.
    pub fn parse(name: &str) -> Option<GoalState> {
        GoalState::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// A run of many goals to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFleet {
    /// Its id (its integration branch is `tether/<id>`).
    pub id: RunId,
    /// The workspace it was started in.
    pub workspace: PathBuf,
    /// The plan file, relative to the workspace.
    pub plan_path: String,
    /// Its integration branch.
    pub branch: String,
    /// The repository's shared remote its goals' workers fetch from and push to; `None`: its
    /// goals work on this machine.
    pub remote: Option<String>,
    /// The budgets its goals' runs share (iterations included); `None`: none.
    pub budget: Option<crate::Budget>,
    /// How many goals work at once.
    pub parallel: u32,
    /// Its goals in the plan's order, each with its `after:`.
    pub goals: Vec<(String, Vec<String>)>,
}

/// One goal of a run of many goals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetGoal {
    /// The goal's id.
    pub goal_id: String,
    /// The goals it waits on (its `after:`).
    pub after: Vec<String>,
    /// Where it stands.
    pub state: GoalState,
    /// The goal run working on it now, or last.
    pub run_id: Option<RunId>,
    /// The machine that run works on.
    pub machine: Option<String>,
    /// When it last moved.
    pub updated_at_ms: i64,
    /// The worker working on it: when it last claimed or renewed its lease (its heartbeat),
    /// and when the lease lapses unless renewed; `None` while no worker holds it.
    pub lease: Option<GoalLease>,
}

/// A worker's lease of a goal, as the dashboard shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GoalLease {
    /// When the worker last claimed or renewed it.
    pub renewed_at_ms: i64,
    /// When it lapses unless renewed.
    pub expires_at_ms: i64,
}

impl GoalLease {
    /// The lease of a goal row (`renewed_at_ms`, `expires_at_ms`): one a worker holds.
    pub fn of(renewed_at_ms: Option<i64>, expires_at_ms: i64) -> Option<GoalLease> {
        let renewed_at_ms = renewed_at_ms?;
        (expires_at_ms > 0).then_some(GoalLease {
            renewed_at_ms,
            expires_at_ms,
        })
    }
}

/// A run of many goals, with its goals in the plan's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// Its id.
    pub id: RunId,
    /// The workspace it was started in.
    pub workspace: PathBuf,
    /// The machine coordinating it.
    pub machine: String,
    /// The plan file, relative to the workspace.
    pub plan_path: String,
    /// Its integration branch: the result.
    pub branch: String,
    /// The repository's shared remote its goals' workers fetch from and push to; `None`: its
    /// goals work on the coordinating machine.
    pub remote: Option<String>,
    /// The budgets its goals' runs share (iterations included); `None`: none.
    pub budget: Option<crate::Budget>,
    /// How many goals work at once.
    pub parallel: u32,
    /// When it began.
    pub started_at_ms: i64,
    /// When it ended, once it has.
    pub ended_at_ms: Option<i64>,
    /// How it ended (`all_merged`, `stuck`, `stopped`, `interrupted`), once it has.
    pub outcome: Option<String>,
    /// Its goals.
    pub goals: Vec<FleetGoal>,
}

impl Fleet {
    /// The goals `goal` waits on that are not merged yet.
    pub fn waits_on(&self, goal: &FleetGoal) -> Vec<String> {
        goal.after
            .iter()
            .filter(|id| {
                self.goals
                    .iter()
                    .any(|g| g.goal_id == **id && g.state != GoalState::Merged)
            })
            .cloned()
            .collect()
    }
}

/// The text a list of goal ids is stored as.
pub(crate) fn join_ids(ids: &[String]) -> String {
    ids.join(",")
}

/// The goal ids stored as `text`.
pub(crate) fn split_ids(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A stored state, or why the store cannot read it.
pub(crate) fn state_of(name: &str) -> Result<GoalState> {
    GoalState::parse(name).ok_or_else(|| StoreError::corrupt(format!("goal state {name:?}")))
}

fn path_text(path: &std::path::Path) -> Result<&str> {
    path.to_str().ok_or_else(|| StoreError::NonUtf8Path {
        path: path.to_owned(),
    })
}

impl Sqlite {
    pub fn begin_fleet(&self, fleet: &NewFleet) -> Result<()> {
        let tx = self.write()?;
        let now = self.now();
        tx.prepare_cached(
            "INSERT INTO fleets (id, workspace, machine, plan_path, branch, remote, budget, \
             parallel, started_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![
            fleet.id.as_str(),
            path_text(&fleet.workspace)?,
            crate::this_machine(),
            fleet.plan_path,
            fleet.branch,
            fleet.remote,
            budget_text(fleet.budget.as_ref())?,
            fleet.parallel,
            now
        ])?;
        for (position, (goal, after)) in fleet.goals.iter().enumerate() {
            tx.prepare_cached(
                "INSERT INTO fleet_goals (fleet_id, goal_id, position, after, state, \
                 updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                fleet.id.as_str(),
                goal,
                i64::try_from(position).unwrap_or(i64::MAX),
                join_ids(after),
                GoalState::Waiting.as_str(),
                now
            ])?;
        }
        let started = Event::FleetStarted {
            fleet_id: fleet.id.clone(),
        };
        append_in(&tx, None, now, &[started])?;
        tx.commit()?;
        Ok(())
    }

    pub fn set_fleet_goal(
        &self,
        fleet_id: &RunId,
        goal_id: &str,
        state: GoalState,
        run_id: Option<&RunId>,
    ) -> Result<()> {
        let tx = self.write()?;
        let changed = tx
            .prepare_cached(
                "UPDATE fleet_goals SET state = ?3, \
                 run_id = COALESCE(?4, run_id), \
                 machine = CASE WHEN ?4 IS NULL THEN machine ELSE ?5 END, \
                 updated_at_ms = ?6 WHERE fleet_id = ?1 AND goal_id = ?2",
            )?
            .execute(params![
                fleet_id.as_str(),
                goal_id,
                state.as_str(),
                run_id.map(RunId::as_str),
                crate::this_machine(),
                self.now()
            ])?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "goal of a run of many goals",
                id: format!("{fleet_id}/{goal_id}"),
            });
        }
        let moved = Event::FleetGoalMoved {
            fleet_id: fleet_id.clone(),
            goal_id: goal_id.to_owned(),
            state,
        };
        append_in(&tx, None, self.now(), &[moved])?;
        tx.commit()?;
        Ok(())
    }

    pub fn end_fleet(&self, fleet_id: &RunId, outcome: &str) -> Result<()> {
        let tx = self.write()?;
        let changed = tx
            .prepare_cached("UPDATE fleets SET ended_at_ms = ?2, outcome = ?3 WHERE id = ?1")?
            .execute(params![fleet_id.as_str(), self.now(), outcome])?;
        if changed == 0 {
            return Err(fleet_not_found(fleet_id));
        }
        let ended = Event::FleetEnded {
            fleet_id: fleet_id.clone(),
            outcome: outcome.to_owned(),
        };
        append_in(&tx, None, self.now(), &[ended])?;
        tx.commit()?;
        Ok(())
    }

    pub fn fleet(&self, fleet_id: &RunId) -> Result<Fleet> {
        let row = self
            .conn
            .prepare_cached(&format!("SELECT {FLEET_COLUMNS} FROM fleets WHERE id = ?1"))?
            .query_row([fleet_id.as_str()], fleet_row)
            .optional()?;
        let mut fleet = row.ok_or_else(|| fleet_not_found(fleet_id))?.parsed()?;
        fleet.goals = self.fleet_goals(fleet_id)?;
        Ok(fleet)
    }

    pub fn fleets(&self, limit: usize) -> Result<Vec<Fleet>> {
        let rows = self
            .conn
            .prepare_cached(&format!(
                "SELECT {FLEET_COLUMNS} FROM fleets ORDER BY started_at_ms DESC, id DESC LIMIT ?1"
            ))?
            .query_map([crate::row::limit(limit)], fleet_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut fleets = Vec::new();
        for row in rows {
            let mut fleet = row.parsed()?;
            fleet.goals = self.fleet_goals(&fleet.id)?;
            fleets.push(fleet);
        }
        Ok(fleets)
    }

    fn fleet_goals(&self, fleet_id: &RunId) -> Result<Vec<FleetGoal>> {
        let rows = self
            .conn
            .prepare_cached(
                "SELECT goal_id, after, state, run_id, machine, updated_at_ms, renewed_at_ms, \
                 expires_at_ms FROM fleet_goals WHERE fleet_id = ?1 ORDER BY position",
            )?
            .query_map([fleet_id.as_str()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, i64>(5)?,
                    (r.get::<_, Option<i64>>(6)?, r.get::<_, i64>(7)?),
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(
                |(goal_id, after, state, run, machine, updated_at_ms, lease)| {
                    Ok(FleetGoal {
                        goal_id,
                        after: split_ids(&after),
                        state: state_of(&state)?,
                        run_id: crate::row::parse_opt("fleet_goals.run_id", run)?,
                        machine,
                        updated_at_ms,
                        lease: GoalLease::of(lease.0, lease.1),
                    })
                },
            )
            .collect()
    }
}

pub(crate) const FLEET_COLUMNS: &str = "id, workspace, machine, plan_path, branch, remote, \
                                         budget, parallel, started_at_ms, ended_at_ms, outcome";

/// A run of many goals' shared budgets as stored (JSON).
pub fn budget_text(budget: Option<&crate::Budget>) -> Result<Option<String>> {
    budget
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| StoreError::corrupt(format!("a budget that does not serialise: {e}")))
}

/// A `fleets` row (its goals read apart).
fn fleet_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawFleet> {
    Ok(RawFleet {
        id: r.get(0)?,
        fleet: Fleet {
            id: RunId::generate(),
            workspace: PathBuf::from(r.get::<_, String>(1)?),
            machine: r.get(2)?,
            plan_path: r.get(3)?,
            branch: r.get(4)?,
            remote: r.get(5)?,
            budget: None,
            parallel: r.get(7)?,
            started_at_ms: r.get(8)?,
            ended_at_ms: r.get(9)?,
            outcome: r.get(10)?,
            goals: Vec::new(),
        },
        budget: r.get(6)?,
    })
}

/// A `fleets` row as read, its id and budget not parsed yet.
struct RawFleet {
    id: String,
    fleet: Fleet,
    budget: Option<String>,
}

impl RawFleet {
    fn parsed(self) -> Result<Fleet> {
        let budget = self
            .budget
            .as_deref()
            .map(|text| crate::row::json("fleets.budget", text))
            .transpose()?;
        Ok(Fleet {
            id: crate::row::parse("fleets.id", &self.id)?,
            budget,
            ..self.fleet
        })
    }
}

fn fleet_not_found(fleet_id: &RunId) -> StoreError {
    StoreError::NotFound {
        what: "run of many goals",
        id: fleet_id.to_string(),
    }
}
