//! One sign-off of a goal at a time, and who cancelled a goal.
//!
//! A sign-off runs verify and a judge session, which take minutes; two started at once (the
//! agent's tool and `tether goal complete` from its shell) would both be attempt *n*, both judge,
//! and overwrite one transcript. So a sign-off first **reserves** its attempt
//! ([`crate::Store::reserve_signoff`]): in one `BEGIN IMMEDIATE` transaction it takes the goal's single
//! `signoffs_running` row and the next attempt number, and a second sign-off meanwhile is told
//! which attempt is running. The reservation is released once the verdict is recorded (or the
//! attempt gave up); a holder that died is taken over. A unique index on
//! `(plan_path, goal_id, attempt)` backs the numbering.
//!
//! A goal of a run may only leave the run as `done` by a sign-off, or as `cancelled` by a
//! person: [`crate::Store::record_cancellation`] keeps who cancelled it, so the goal loop can tell a
//! person's cancel from the agent's (which waits for a person to confirm it).

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::error::Result;
use crate::ids::RunId;
use crate::journal::ensure_run;
use crate::row;
use crate::store::Sqlite;

/// A sign-off in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunningSignoff {
    /// The attempt it will record.
    pub attempt: u32,
    /// The process making it (as the caller named it).
    pub holder: String,
    /// When it started.
    pub started_at_ms: i64,
}

/// What [`crate::Store::reserve_signoff`] got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// This attempt is the caller's; release it with [`crate::Store::release_signoff`].
    Reserved {
        /// Its number (one more than the goal's last recorded attempt).
        attempt: u32,
    },
    /// Another sign-off of the goal is running.
    Busy(RunningSignoff),
}

/// A cancellation about to be recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewCancellation {
    /// The plan file, as the caller names it.
    pub plan_path: String,
    /// The goal.
    pub goal_id: String,
    /// Whether a person cancelled it (`tether goal cancel`), or the agent.
    pub by_person: bool,
    /// Who: the person's name, or the agent's run.
    pub by: String,
    /// Why.
    pub reason: String,
    /// The run the agent works in, if any.
    pub run_id: Option<RunId>,
}

/// A recorded cancellation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cancellation {
    /// Its row id.
    pub id: i64,
    /// When it was recorded.
    pub created_at_ms: i64,
    /// What was recorded.
    #[serde(flatten)]
    pub cancel: NewCancellation,
}

impl Sqlite {
    pub fn reserve_signoff(
        &self,
        plan_path: &str,
        goal_id: &str,
        holder: &str,
        is_gone: &dyn Fn(&str) -> bool,
    ) -> Result<Reservation> {
        let tx = self.write()?;
        let running = tx
            .query_row(
                "SELECT attempt, holder, started_at_ms FROM signoffs_running \
                 WHERE plan_path = ?1 AND goal_id = ?2",
                [plan_path, goal_id],
                |r| {
                    Ok(RunningSignoff {
                        attempt: r.get(0)?,
                        holder: r.get(1)?,
                        started_at_ms: r.get(2)?,
                    })
                },
            )
            .optional()?;
        if let Some(running) = running {
            if !is_gone(&running.holder) {
                return Ok(Reservation::Busy(running));
            }
            tx.execute(
                "DELETE FROM signoffs_running WHERE plan_path = ?1 AND goal_id = ?2",
                [plan_path, goal_id],
            )?;
        }
        let last: u32 = tx.query_row(
            "SELECT COALESCE(MAX(attempt), 0) FROM verdicts WHERE plan_path = ?1 AND goal_id = ?2",
            [plan_path, goal_id],
            |r| r.get(0),
        )?;
        let attempt = last.saturating_add(1);
        tx.execute(
            "INSERT INTO signoffs_running (plan_path, goal_id, attempt, holder, started_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![plan_path, goal_id, attempt, holder, self.now()],
        )?;
        tx.commit()?;
        Ok(Reservation::Reserved { attempt })
    }

    pub fn release_signoff(&self, plan_path: &str, goal_id: &str, holder: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "DELETE FROM signoffs_running WHERE plan_path = ?1 AND goal_id = ?2 \
                 AND holder = ?3",
            )?
            .execute([plan_path, goal_id, holder])?;
        Ok(())
    }

    pub fn record_cancellation(&self, new: &NewCancellation) -> Result<i64> {
        let tx = self.write()?;
        if let Some(run) = &new.run_id {
            ensure_run(&tx, run)?;
        }
        tx.execute(
            "INSERT INTO cancellations (plan_path, goal_id, by_person, cancelled_by, reason, \
             run_id, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                new.plan_path,
                new.goal_id,
                new.by_person,
                new.by,
                new.reason,
                new.run_id.as_ref().map(RunId::as_str),
                self.now()
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    pub fn last_cancellation_id(&self) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM cancellations")?
            .query_row([], |r| r.get(0))?)
    }

    pub fn latest_cancellation(
        &self,
        plan_path: &str,
        goal_id: &str,
    ) -> Result<Option<Cancellation>> {
        let raw = self
            .conn
            .prepare_cached(
                "SELECT id, created_at_ms, plan_path, goal_id, by_person, cancelled_by, reason, \
                 run_id FROM cancellations WHERE plan_path = ?1 AND goal_id = ?2 \
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([plan_path, goal_id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, bool>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, Option<String>>(7)?,
                ))
            })
            .optional()?;
        let Some((id, created_at_ms, plan_path, goal_id, by_person, by, reason, run)) = raw else {
            return Ok(None);
        };
        Ok(Some(Cancellation {
            id,
            created_at_ms,
            cancel: NewCancellation {
                plan_path,
                goal_id,
                by_person,
                by,
                reason,
                run_id: row::parse_opt("cancellations.run_id", run)?,
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::Store;

    #[test]
    fn a_second_reservation_is_busy_until_the_first_is_released_or_gone() {
        let store = Store::open_in_memory().unwrap();
        let reserve = |holder: &str, gone: bool| {
            store
                .reserve_signoff("plan.md", "g", holder, &|_| gone)
                .unwrap()
        };
        assert_eq!(reserve("a", false), Reservation::Reserved { attempt: 1 });
        match reserve("b", false) {
            Reservation::Busy(r) => assert_eq!((r.attempt, r.holder.as_str()), (1, "a")),
            other => panic!("{other:?}"),
        }
        // Another goal is not held up.
        assert_eq!(
            store
                .reserve_signoff("plan.md", "other", "b", &|_| false)
                .unwrap(),
            Reservation::Reserved { attempt: 1 }
        );
        // A holder that died is taken over, with the same number (it recorded nothing).
        assert_eq!(reserve("c", true), Reservation::Reserved { attempt: 1 });
        store.release_signoff("plan.md", "g", "a").unwrap();
        assert!(matches!(reserve("d", false), Reservation::Busy(_)));
        store.release_signoff("plan.md", "g", "c").unwrap();
        assert_eq!(reserve("d", false), Reservation::Reserved { attempt: 1 });
    }

    #[test]
    fn the_latest_cancellation_says_who_made_it() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.latest_cancellation("plan.md", "g").unwrap(), None);
        let agent = NewCancellation {
            plan_path: "plan.md".into(),
            goal_id: "g".into(),
            by_person: false,
            by: "agent".into(),
            reason: "obsolete".into(),
            run_id: None,
        };
        store.record_cancellation(&agent).unwrap();
        let person = NewCancellation {
            by_person: true,
            by: "ann".into(),
            ..agent
        };
        store.record_cancellation(&person).unwrap();
        let latest = store.latest_cancellation("plan.md", "g").unwrap().unwrap();
        assert_eq!(latest.cancel, person);
    }
}
