//! Who drives a run: a lease in the store, held by one process at a time.
//!
//! A process that drives a run **claims** it ([`crate::Store::claim_run`]) for a while (the
//! lease's length), **renews** it well before that while it works
//! ([`crate::Store::renew_run`], a heartbeat), and **releases** it when it stops
//! ([`crate::Store::release_run`]). A run whose holder stopped renewing — killed, paused by the
//! kernel, cut off from a shared store — can be claimed by any process, on any machine that has
//! the workspace, once the lease lapses. Two holders at once are impossible: a claim happens in
//! one transaction that sees the current lease.
//!
//! Every claim draws a new **fencing token**, a number that grows with each claim of the run and
//! never goes back. The holder presents it with every write it makes as the run's driver
//! ([`crate::Store::append_fenced`]); a write whose token is no longer the run's (another
//! process claimed it since) or whose lease lapsed is refused with
//! [`StoreError::LeaseLost`](crate::StoreError::LeaseLost) and writes nothing. So a holder that
//! wakes from a long pause finds out by its first write, before a late sign-off, push or merge
//! lands on top of the new holder's work.
//!
//! Both backends keep these rules; the team store's clock is the machines' own (their clocks
//! must agree to well within a lease's length).

use std::path::PathBuf;

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::error::{Result, StoreError};
use crate::event::Event;
use crate::ids::{RunId, Seq};
use crate::journal::{append_in, ensure_run};
use crate::store::Sqlite;

/// The process driving a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// The machine it runs on (see [`crate::this_machine`]).
    pub machine: String,
    /// Its process id there.
    pub pid: u32,
    /// The workspace it drives the run in.
    pub workspace: PathBuf,
}

impl Holder {
    /// This process, driving a run in `workspace`.
    pub fn this_process(workspace: impl Into<PathBuf>) -> Holder {
        Holder {
            machine: crate::this_machine(),
            pid: std::process::id(),
            workspace: workspace.into(),
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {} in {}",
            self.pid,
            self.machine,
            self.workspace.display()
        )
    }
}

/// A run's lease as the store holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lease {
    /// The run.
    pub run_id: RunId,
    /// Who holds it.
    pub holder: Holder,
    /// Its fencing token: greater than every earlier claim's.
    pub token: i64,
    /// When it was claimed.
    pub claimed_at_ms: i64,
    /// When it lapses unless renewed.
    pub expires_at_ms: i64,
}

/// What [`crate::Store::claim_run`] got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The run is the caller's until the lease lapses: renew it, present its token with every
    /// write, release it when done.
    Claimed(Lease),
    /// Another holder's lease is live: wait for it to lapse or ask that holder to stop.
    Held(Lease),
}

/// Why a holder's token no longer writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Lapse {
    /// The run was never claimed.
    Unclaimed,
    /// The lease was not renewed in time.
    Expired,
    /// The holder released it.
    Released,
    /// Another claim drew a newer token.
    TakenOver,
}

impl std::fmt::Display for Lapse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Lapse::Unclaimed => "the run was never claimed",
            Lapse::Expired => "the lease lapsed before it was renewed",
            Lapse::Released => "the lease was released",
            Lapse::TakenOver => "another process has claimed the run since",
        })
    }
}

impl Lease {
    /// Whether it is live at `now` (neither lapsed nor released).
    pub fn is_live_at(&self, now: i64) -> bool {
        live(self.expires_at_ms, now)
    }
}

impl Lapse {
    /// Why `token` does not hold a run whose lease row is `current` at `now`; `None` when it
    /// does. Every backend decides a fenced write by this.
    pub fn of(current: Option<&Lease>, token: i64, now: i64) -> Option<Lapse> {
        match current {
            None => Some(Lapse::Unclaimed),
            Some(lease) if lease.token != token => Some(Lapse::TakenOver),
            Some(lease) if lease.expires_at_ms == 0 => Some(Lapse::Released),
            Some(lease) if !lease.is_live_at(now) => Some(Lapse::Expired),
            Some(_) => None,
        }
    }

    /// Whether a claim by `holder` at `now` must wait for the lease `current`: it is live, not
    /// `holder`'s own, and its holder is not known to be gone.
    pub fn blocks(
        current: Option<&Lease>,
        holder: &Holder,
        now: i64,
        is_gone: &dyn Fn(&Holder) -> bool,
    ) -> bool {
        current.is_some_and(|lease| {
            lease.is_live_at(now) && lease.holder != *holder && !is_gone(&lease.holder)
        })
    }
}

/// Whether a lease expiring at `expires_at_ms` is live at `now`.
fn live(expires_at_ms: i64, now: i64) -> bool {
    expires_at_ms > now
}

impl Sqlite {
    pub fn claim_run(
        &self,
        run_id: &RunId,
        holder: &Holder,
        ttl_ms: i64,
        is_gone: &dyn Fn(&Holder) -> bool,
    ) -> Result<Claim> {
        let tx = self.write()?;
        ensure_run(&tx, run_id)?;
        let now = self.now();
        let current = lease_in(&tx, run_id)?;
        if let Some(lease) = current
            .as_ref()
            .filter(|_| Lapse::blocks(current.as_ref(), holder, now, is_gone))
        {
            return Ok(Claim::Held(lease.clone()));
        }
        let token = current.map_or(1, |lease| lease.token.saturating_add(1));
        let workspace = holder
            .workspace
            .to_str()
            .ok_or_else(|| StoreError::NonUtf8Path {
                path: holder.workspace.clone(),
            })?;
        tx.prepare_cached(
            "INSERT INTO run_leases (run_id, machine, pid, workspace, token, claimed_at_ms, \
             expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
             ON CONFLICT (run_id) DO UPDATE SET machine = ?2, pid = ?3, workspace = ?4, \
             token = ?5, claimed_at_ms = ?6, expires_at_ms = ?7",
        )?
        .execute(params![
            run_id.as_str(),
            holder.machine,
            holder.pid,
            workspace,
            token,
            now,
            now.saturating_add(ttl_ms)
        ])?;
        let lease = lease_in(&tx, run_id)?
            .ok_or_else(|| StoreError::corrupt("a claimed lease was not written"))?;
        tx.commit()?;
        Ok(Claim::Claimed(lease))
    }

    pub fn renew_run(&self, run_id: &RunId, token: i64, ttl_ms: i64) -> Result<Lease> {
        let tx = self.write()?;
        let now = self.now();
        held(&tx, run_id, token, now)?;
        tx.prepare_cached("UPDATE run_leases SET expires_at_ms = ?2 WHERE run_id = ?1")?
            .execute(params![run_id.as_str(), now.saturating_add(ttl_ms)])?;
        let lease = lease_in(&tx, run_id)?
            .ok_or_else(|| StoreError::corrupt("a renewed lease was not written"))?;
        tx.commit()?;
        Ok(lease)
    }

    pub fn release_run(&self, run_id: &RunId, token: i64) -> Result<bool> {
        let tx = self.write()?;
        let released = tx
            .prepare_cached(
                "UPDATE run_leases SET expires_at_ms = 0 WHERE run_id = ?1 AND token = ?2 \
                 AND expires_at_ms <> 0",
            )?
            .execute(params![run_id.as_str(), token])?;
        tx.commit()?;
        Ok(released > 0)
    }

    pub fn run_lease(&self, run_id: &RunId) -> Result<Option<Lease>> {
        let now = self.now();
        Ok(lease_in(&self.conn, run_id)?.filter(|lease| lease.is_live_at(now)))
    }

    pub fn append_fenced(&self, run_id: &RunId, token: i64, events: &[Event]) -> Result<Vec<Seq>> {
        let tx = self.write()?;
        held(&tx, run_id, token, self.now())?;
        let seqs = append_in(&tx, Some(run_id), self.now(), events)?;
        tx.commit()?;
        Ok(seqs)
    }
}

/// Refuses, in `tx`, unless `token` holds `run_id`'s live lease at `now`.
fn held(tx: &Transaction<'_>, run_id: &RunId, token: i64, now: i64) -> Result<()> {
    let current = lease_in(tx, run_id)?;
    match Lapse::of(current.as_ref(), token, now) {
        None => Ok(()),
        Some(lapse) => Err(StoreError::LeaseLost {
            run: run_id.to_string(),
            token,
            lapse,
        }),
    }
}

/// `run_id`'s lease row, live or not.
fn lease_in(conn: &rusqlite::Connection, run_id: &RunId) -> Result<Option<Lease>> {
    let row = conn
        .prepare_cached(
            "SELECT machine, pid, workspace, token, claimed_at_ms, expires_at_ms \
             FROM run_leases WHERE run_id = ?1",
        )?
        .query_row([run_id.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })
        .optional()?;
    Ok(row.map(
        |(machine, pid, workspace, token, claimed_at_ms, expires_at_ms)| Lease {
            run_id: run_id.clone(),
            holder: Holder {
                machine,
                pid,
                workspace: PathBuf::from(workspace),
            },
            token,
            claimed_at_ms,
            expires_at_ms,
        },
    ))
}
