//! Goals on a schedule (`tether schedule`): one row per schedule of a workspace — when it
//! fires, what each fire starts, whether it is paused — and its fires, each claimed with the
//! rules of a run's lease (`leases.rs`).
//!
//! A scheduler that finds a schedule due **claims** its next fire: only when the schedule's
//! fire token is still the one it read, it is not paused and no fire of it goes on (or the
//! one going on lapsed: its scheduler stopped renewing it). The claim sets a new token, in one
//! conditional write, so two schedulers — on one machine or on many sharing a team store —
//! never fire one schedule twice. Every token, the one a schedule is added with and each of
//! its fires', is the next value of one store-wide counter (`schedule_fire_tokens`), so none
//! ever comes again: a fire of a schedule since removed, whose run still goes on, holds a token
//! no schedule added again under its name will have, and can neither renew nor end its fires,
//! and a scheduler's reading of the removed one claims nothing of the new.
//!
//! The scheduler **renews** the fire's lease while its run works, records its run once it
//! **started**, and **ends** it with how the run ended: a run that did not end done counts as
//! a failure, and the `pause_after`th failure in a row pauses the schedule (the end says so,
//! once, so one notice is sent). A fire whose lease lapsed and that never ended — its scheduler
//! was killed, or stopped, mid-run — is **abandoned** by the next scheduler that sees it: its
//! outcome says so (naming its run, when it started one), and no failure is counted. A
//! schedule late past its grace is **marked overdue** once per overdue spell (the next fire
//! clears it), so one notice is sent for it.
//!
//! The store knows nothing of clocks beyond its own: the scheduler decides when a schedule is
//! due (`tether_core::schedule`) and hands the time it fired at.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use crate::error::{Result, StoreError};
use crate::ids::RunId;
use crate::leases::{Holder, Lapse};
use crate::store::Sqlite;

/// A schedule to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSchedule {
    /// The workspace it belongs to (its runs work there).
    pub workspace: PathBuf,
    /// Its name, unique in its workspace.
    pub name: String,
    /// When it fires, as the scheduler spells it (`every 3600s`, `cron 0 9 * * 1-5`).
    pub timing: String,
    /// What each fire starts, as the scheduler spells it (JSON).
    pub work: serde_json::Value,
}

/// A schedule and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// The workspace it belongs to.
    pub workspace: PathBuf,
    /// Its name.
    pub name: String,
    /// When it fires (see [`NewSchedule::timing`]).
    pub timing: String,
    /// What each fire starts (see [`NewSchedule::work`]).
    pub work: serde_json::Value,
    /// Whether it is paused (by a person, or by its failures).
    pub paused: bool,
    /// When it was added.
    pub created_at_ms: i64,
    /// The token of its last fire, or before its first the one it was added with: a value of
    /// the store-wide counter, never another row's (see the module's documentation).
    pub fire: i64,
    /// When the lease of the fire going on lapses unless renewed; 0 when none goes on.
    pub expires_at_ms: i64,
    /// The machine that fired it last.
    pub machine: Option<String>,
    /// When it last fired.
    pub last_fire_ms: Option<i64>,
    /// The run its last fire started, once started.
    pub last_run: Option<RunId>,
    /// How its last fire ended (`done`, or what went wrong); `None` while it goes on or
    /// before any fire.
    pub last_outcome: Option<String>,
    /// Its fires in a row that did not end done.
    pub failures: u32,
    /// When it was last found overdue and a notice sent, if it is still in that spell.
    pub overdue_at_ms: Option<i64>,
    /// When a person last resumed it, if ever (its lateness is measured from then when later
    /// than its due time).
    pub resumed_at_ms: Option<i64>,
}

impl Schedule {
    /// Whether a fire of it goes on at `now` (its lease is live).
    pub fn firing(&self, now: i64) -> bool {
        self.expires_at_ms > now
    }
}

/// A fire a scheduler claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireClaim {
    /// Its token: present it with every renewal and with the end.
    pub token: i64,
    /// When its lease lapses unless renewed.
    pub expires_at_ms: i64,
}

/// How a fire ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireEnd {
    /// The run it started, if it started one.
    pub run: Option<RunId>,
    /// `done`, or what went wrong, for people.
    pub outcome: String,
    /// Whether it ended done (anything else is a failure).
    pub done: bool,
}

/// What the end of a fire left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireEnded {
    /// The schedule's failures in a row now.
    pub failures: u32,
    /// Whether this end paused the schedule (it was not paused before).
    pub paused_now: bool,
}

/// The failures in a row after a fire that ended `done` or not, and whether they pause the
/// schedule: the `pause_after`th failure in a row does (0: failures never pause it). Every
/// backend counts by this.
pub fn count_failure(failures: u32, done: bool, pause_after: u32) -> (u32, bool) {
    if done {
        return (0, false);
    }
    let failures = failures.saturating_add(1);
    (failures, pause_after > 0 && failures >= pause_after)
}

/// The columns a [`Schedule`] is read from, in order.
pub const SCHEDULE_COLUMNS: &str = "workspace, name, timing, work, paused, created_at_ms, fire, \
     expires_at_ms, machine, last_fire_ms, last_run_id, last_outcome, failures, overdue_at_ms, \
     resumed_at_ms";

/// A schedule's name as a lease error names it (`schedule <name>`).
pub fn fire_name(name: &str) -> String {
    format!("schedule {name}")
}

/// Why `token` does not hold the fire going on of a schedule whose fire token is `current`
/// with a lease to `expires_at_ms`; `None` when it does. A fire whose lease lapsed is still its
/// scheduler's to end while no other took the schedule over. Every backend decides by this.
pub fn fire_lapse(current: i64, expires_at_ms: i64, token: i64) -> Option<Lapse> {
    if current != token {
        Some(Lapse::TakenOver)
    } else if expires_at_ms == 0 {
        Some(Lapse::Released)
    } else {
        None
    }
}

fn path_text(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| StoreError::NonUtf8Path {
        path: path.to_owned(),
    })
}

fn not_found(name: &str) -> StoreError {
    StoreError::NotFound {
        what: "schedule",
        id: name.to_owned(),
    }
}

/// A [`Schedule`] from a row of [`SCHEDULE_COLUMNS`] (the outer error SQLite's, the inner a
/// column this build cannot read).
fn schedule_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Schedule>> {
    let work: String = r.get(3)?;
    let last_run: Option<String> = r.get(10)?;
    let failures: i64 = r.get(12)?;
    let mut schedule = Schedule {
        workspace: PathBuf::from(r.get::<_, String>(0)?),
        name: r.get(1)?,
        timing: r.get(2)?,
        work: serde_json::Value::Null,
        paused: r.get::<_, i64>(4)? != 0,
        created_at_ms: r.get(5)?,
        fire: r.get(6)?,
        expires_at_ms: r.get(7)?,
        machine: r.get(8)?,
        last_fire_ms: r.get(9)?,
        last_run: None,
        last_outcome: r.get(11)?,
        failures: u32::try_from(failures).unwrap_or(u32::MAX),
        overdue_at_ms: r.get(13)?,
        resumed_at_ms: r.get(14)?,
    };
    let decoded = crate::row::json("schedules.work", &work).and_then(|work| {
        let run = crate::row::parse_opt("schedules.last_run_id", last_run)?;
        Ok((work, run))
    });
    Ok(decoded.map(|(work, run)| {
        schedule.work = work;
        schedule.last_run = run;
        schedule
    }))
}

impl Sqlite {
    pub fn add_schedule(&self, new: &NewSchedule) -> Result<bool> {
        let tx = self.write()?;
        let now = self.now();
        let work = serde_json::to_string(&new.work).map_err(StoreError::Json)?;
        let token = next_token(&tx)?;
        let added = tx
            .prepare_cached(
                "INSERT INTO schedules (workspace, name, timing, work, created_at_ms, fire) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (workspace, name) DO NOTHING",
            )?
            .execute(params![
                path_text(&new.workspace)?,
                new.name,
                new.timing,
                work,
                now,
                token
            ])?;
        if added != 1 {
            return Ok(false);
        }
        tx.commit()?;
        Ok(true)
    }

    pub fn schedules(&self, workspace: &Path) -> Result<Vec<Schedule>> {
        let tx = self.read()?;
        let rows = tx
            .prepare_cached(&format!(
                "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE workspace = ?1 ORDER BY name"
            ))?
            .query_map([path_text(workspace)?], schedule_of)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().collect()
    }

    pub fn schedule(&self, workspace: &Path, name: &str) -> Result<Schedule> {
        let tx = self.read()?;
        one(&tx, path_text(workspace)?, name)?.ok_or_else(|| not_found(name))
    }

    pub fn remove_schedule(&self, workspace: &Path, name: &str) -> Result<bool> {
        let tx = self.write()?;
        let removed = tx
            .prepare_cached("DELETE FROM schedules WHERE workspace = ?1 AND name = ?2")?
            .execute(params![path_text(workspace)?, name])?;
        tx.commit()?;
        Ok(removed == 1)
    }

    pub fn pause_schedule(&self, workspace: &Path, name: &str, paused: bool) -> Result<bool> {
        let tx = self.write()?;
        // Resumed, it starts afresh: no failures counted, not overdue, and (when it was
        // paused) not late before a grace from now.
        let changed = tx
            .prepare_cached(
                "UPDATE schedules SET paused = ?3, \
                 failures = CASE WHEN ?3 THEN failures ELSE 0 END, \
                 overdue_at_ms = CASE WHEN ?3 THEN overdue_at_ms ELSE NULL END, \
                 resumed_at_ms = CASE WHEN NOT ?3 AND paused = 1 THEN ?4 ELSE resumed_at_ms END \
                 WHERE workspace = ?1 AND name = ?2",
            )?
            .execute(params![path_text(workspace)?, name, paused, self.now()])?;
        tx.commit()?;
        Ok(changed == 1)
    }

    pub fn claim_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        seen: i64,
        at_ms: i64,
        holder: &Holder,
        ttl_ms: i64,
    ) -> Result<Option<FireClaim>> {
        let tx = self.write()?;
        let now = self.now();
        let token = next_token(&tx)?;
        let expires_at_ms = now.saturating_add(ttl_ms);
        let claimed = tx
            .prepare_cached(
                "UPDATE schedules SET fire = ?4, expires_at_ms = ?5, machine = ?6, \
                 last_fire_ms = ?7, last_run_id = NULL, last_outcome = NULL, \
                 overdue_at_ms = NULL \
                 WHERE workspace = ?1 AND name = ?2 AND fire = ?3 AND paused = 0 \
                 AND expires_at_ms <= ?8",
            )?
            .execute(params![
                path_text(workspace)?,
                name,
                seen,
                token,
                expires_at_ms,
                holder.machine,
                at_ms,
                now
            ])?;
        if claimed != 1 {
            // Dropped, the transaction gives the token back.
            return Ok(None);
        }
        tx.commit()?;
        Ok(Some(FireClaim {
            token,
            expires_at_ms,
        }))
    }

    pub fn renew_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        token: i64,
        ttl_ms: i64,
    ) -> Result<i64> {
        let tx = self.write()?;
        let now = self.now();
        let found = one(&tx, path_text(workspace)?, name)?.ok_or_else(|| not_found(name))?;
        held(&found, token)?;
        let expires_at_ms = now.saturating_add(ttl_ms);
        tx.prepare_cached(
            "UPDATE schedules SET expires_at_ms = ?3 WHERE workspace = ?1 AND name = ?2",
        )?
        .execute(params![path_text(workspace)?, name, expires_at_ms])?;
        tx.commit()?;
        Ok(expires_at_ms)
    }

    pub fn start_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        token: i64,
        run: &RunId,
    ) -> Result<()> {
        let tx = self.write()?;
        let found = one(&tx, path_text(workspace)?, name)?.ok_or_else(|| not_found(name))?;
        held(&found, token)?;
        tx.prepare_cached(
            "UPDATE schedules SET last_run_id = ?3 WHERE workspace = ?1 AND name = ?2",
        )?
        .execute(params![path_text(workspace)?, name, run.as_str()])?;
        tx.commit()?;
        Ok(())
    }

    pub fn abandon_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        seen: i64,
        run: Option<&RunId>,
        outcome: &str,
    ) -> Result<bool> {
        let tx = self.write()?;
        let abandoned = tx
            .prepare_cached(
                "UPDATE schedules SET expires_at_ms = 0, last_outcome = ?5 \
                 WHERE workspace = ?1 AND name = ?2 AND fire = ?3 AND last_run_id IS ?4 \
                 AND expires_at_ms > 0 AND expires_at_ms <= ?6",
            )?
            .execute(params![
                path_text(workspace)?,
                name,
                seen,
                run.map(RunId::as_str),
                outcome,
                self.now()
            ])?;
        tx.commit()?;
        Ok(abandoned == 1)
    }

    pub fn end_schedule_fire(
        &self,
        workspace: &Path,
        name: &str,
        token: i64,
        end: &FireEnd,
        pause_after: u32,
    ) -> Result<FireEnded> {
        let tx = self.write()?;
        let found = one(&tx, path_text(workspace)?, name)?.ok_or_else(|| not_found(name))?;
        held(&found, token)?;
        let (failures, pauses) = count_failure(found.failures, end.done, pause_after);
        let paused_now = pauses && !found.paused;
        tx.prepare_cached(
            "UPDATE schedules SET expires_at_ms = 0, last_run_id = ?3, last_outcome = ?4, \
             failures = ?5, paused = CASE WHEN ?6 THEN 1 ELSE paused END \
             WHERE workspace = ?1 AND name = ?2",
        )?
        .execute(params![
            path_text(workspace)?,
            name,
            end.run.as_ref().map(RunId::as_str),
            end.outcome,
            failures,
            pauses
        ])?;
        tx.commit()?;
        Ok(FireEnded {
            failures,
            paused_now,
        })
    }

    pub fn mark_schedule_overdue(
        &self,
        workspace: &Path,
        name: &str,
        seen: i64,
        at_ms: i64,
    ) -> Result<bool> {
        let tx = self.write()?;
        let marked = tx
            .prepare_cached(
                "UPDATE schedules SET overdue_at_ms = ?4 WHERE workspace = ?1 AND name = ?2 \
                 AND fire = ?3 AND paused = 0 AND overdue_at_ms IS NULL",
            )?
            .execute(params![path_text(workspace)?, name, seen, at_ms])?;
        tx.commit()?;
        Ok(marked == 1)
    }
}

/// The store-wide counter's next value, taken in `tx` (given back if `tx` is not committed).
fn next_token(tx: &rusqlite::Transaction<'_>) -> Result<i64> {
    let token = tx
        .prepare_cached(
            "UPDATE schedule_fire_tokens SET last = last + 1 WHERE id = 1 RETURNING last",
        )?
        .query_row([], |r| r.get(0))
        .optional()?;
    token.ok_or_else(|| StoreError::corrupt("the table schedule_fire_tokens has no row"))
}

/// The schedule `name` of `workspace`, in `tx`.
fn one(tx: &rusqlite::Transaction<'_>, workspace: &str, name: &str) -> Result<Option<Schedule>> {
    tx.prepare_cached(&format!(
        "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE workspace = ?1 AND name = ?2"
    ))?
    .query_row(params![workspace, name], schedule_of)
    .optional()?
    .transpose()
}

/// Refuses unless `token` holds `schedule`'s fire going on.
fn held(schedule: &Schedule, token: i64) -> Result<()> {
    match fire_lapse(schedule.fire, schedule.expires_at_ms, token) {
        None => Ok(()),
        Some(lapse) => Err(StoreError::LeaseLost {
            run: fire_name(&schedule.name),
            token,
            lapse,
        }),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::count_failure;

    #[test]
    fn the_third_failure_in_a_row_pauses_and_done_starts_afresh() {
        assert_eq!(count_failure(0, false, 3), (1, false));
        assert_eq!(count_failure(1, false, 3), (2, false));
        assert_eq!(count_failure(2, false, 3), (3, true));
        assert_eq!(count_failure(2, true, 3), (0, false));
        assert_eq!(count_failure(40, false, 0), (41, false), "0: never paused");
    }

    proptest! {
        #[test]
        fn failures_pause_exactly_from_the_threshold_on(
            ends in proptest::collection::vec(any::<bool>(), 0..40),
            pause_after in 0u32..6,
        ) {
            let mut failures = 0u32;
            let mut in_a_row = 0u32;
            for done in ends {
                let (next, pauses) = count_failure(failures, done, pause_after);
                in_a_row = if done { 0 } else { in_a_row + 1 };
                prop_assert_eq!(next, in_a_row);
                prop_assert_eq!(pauses, pause_after > 0 && in_a_row >= pause_after);
                failures = next;
            }
        }
    }
}
