//! Who drives a run, as a lease in the team store: the rules of the embedded store's
//! `leases.rs` (claim, renew, release, a fencing token that grows with every claim, writes
//! refused once it no longer holds), with the run's lease row locked (`FOR UPDATE`) for the
//! length of each transaction, so claims from several machines serialise.

use std::path::PathBuf;

use tether_store::{Claim, Event, Holder, Lapse, Lease, RunId, Seq};

use crate::conn::Conn;
use crate::error::{PgStoreError, Result};
use crate::journal::{append_in, get, run_not_found};
use crate::store::PgStore;

const LEASE_COLUMNS: &str = "machine, pid, workspace, token, claimed_at_ms, expires_at_ms";

impl PgStore {
    /// Claims the run for `holder` for `ttl_ms`, unless another holder's lease is live (and its
    /// holder not known to be gone).
    pub async fn claim_run(
        &self,
        run_id: &RunId,
        holder: &Holder,
        ttl_ms: i64,
        is_gone: &dyn Fn(&Holder) -> bool,
    ) -> Result<Claim> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let exists = tx
            .prepare_cached("SELECT 1 FROM runs WHERE id = $1 FOR SHARE")
            .await?;
        if tx.query_opt(&exists, &[&run_id.as_str()]).await?.is_none() {
            return Err(run_not_found(run_id));
        }
        // Two claims of one run serialise here, whether or not it has a lease row yet.
        let lock = tx
            .prepare_cached("SELECT pg_advisory_xact_lock(hashtextextended('lease/' || $1, 0))")
            .await?;
        tx.execute(&lock, &[&run_id.as_str()]).await?;
        let now = self.now();
        let current = lease_in(&tx, run_id).await?;
        if let Some(lease) = current
            .as_ref()
            .filter(|_| Lapse::blocks(current.as_ref(), holder, now, is_gone))
        {
            let held = lease.clone();
            tx.commit().await?;
            return Ok(Claim::Held(held));
        }
        let token = current.map_or(1, |lease| lease.token.saturating_add(1));
        let workspace = holder
            .workspace
            .to_str()
            .ok_or_else(|| PgStoreError::NonUtf8Path {
                path: holder.workspace.clone(),
            })?;
        let upsert = tx
            .prepare_cached(
                "INSERT INTO run_leases (run_id, machine, pid, workspace, token, claimed_at_ms, \
                 expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (run_id) DO UPDATE SET machine = $2, pid = $3, workspace = $4, \
                 token = $5, claimed_at_ms = $6, expires_at_ms = $7",
            )
            .await?;
        tx.execute(
            &upsert,
            &[
                &run_id.as_str(),
                &holder.machine,
                &i64::from(holder.pid),
                &workspace,
                &token,
                &now,
                &now.saturating_add(ttl_ms),
            ],
        )
        .await?;
        let lease = lease_in(&tx, run_id)
            .await?
            .ok_or_else(|| PgStoreError::corrupt("a claimed lease was not written"))?;
        tx.commit().await?;
        Ok(Claim::Claimed(lease))
    }

    /// Extends the lease `token` holds for `ttl_ms` from now.
    pub async fn renew_run(&self, run_id: &RunId, token: i64, ttl_ms: i64) -> Result<Lease> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        held(&tx, run_id, token, now).await?;
        let renew = tx
            .prepare_cached("UPDATE run_leases SET expires_at_ms = $2 WHERE run_id = $1")
            .await?;
        tx.execute(&renew, &[&run_id.as_str(), &now.saturating_add(ttl_ms)])
            .await?;
        let lease = lease_in(&tx, run_id)
            .await?
            .ok_or_else(|| PgStoreError::corrupt("a renewed lease was not written"))?;
        tx.commit().await?;
        Ok(lease)
    }

    /// Releases the lease `token` holds; whether it still held it.
    pub async fn release_run(&self, run_id: &RunId, token: i64) -> Result<bool> {
        let client = self.client().await?;
        let release = client
            .prepare_cached(
                "UPDATE run_leases SET expires_at_ms = 0 WHERE run_id = $1 AND token = $2 \
                 AND expires_at_ms <> 0",
            )
            .await?;
        Ok(client
            .execute(&release, &[&run_id.as_str(), &token])
            .await?
            > 0)
    }

    /// The run's live lease, if any.
    pub async fn run_lease(&self, run_id: &RunId) -> Result<Option<Lease>> {
        let client = self.client().await?;
        let now = self.now();
        Ok(lease_in(&*client, run_id)
            .await?
            .filter(|lease| lease.is_live_at(now)))
    }

    /// Appends the run's driver's `events`, only while `token` holds its live lease.
    pub async fn append_fenced(
        &self,
        run_id: &RunId,
        token: i64,
        events: &[Event],
    ) -> Result<Vec<Seq>> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        held(&tx, run_id, token, now).await?;
        let seqs = append_in(&tx, Some(run_id), now, events).await?;
        tx.commit().await?;
        Ok(seqs)
    }
}

/// Refuses, in `tx` (the lease row locked until it ends), unless `token` holds `run_id`'s live
/// lease at `now`.
async fn held(tx: &impl Conn, run_id: &RunId, token: i64, now: i64) -> Result<()> {
    let lock = tx
        .prepare_cached(&format!(
            "SELECT {LEASE_COLUMNS} FROM run_leases WHERE run_id = $1 FOR UPDATE"
        ))
        .await?;
    let current = match tx.query_opt(&lock, &[&run_id.as_str()]).await? {
        Some(row) => Some(decode(run_id, &row)?),
        None => None,
    };
    match Lapse::of(current.as_ref(), token, now) {
        None => Ok(()),
        Some(lapse) => Err(PgStoreError::LeaseLost {
            run: run_id.to_string(),
            token,
            lapse,
        }),
    }
}

/// `run_id`'s lease row, live or not.
async fn lease_in(conn: &impl Conn, run_id: &RunId) -> Result<Option<Lease>> {
    let select = conn
        .prepare_cached(&format!(
            "SELECT {LEASE_COLUMNS} FROM run_leases WHERE run_id = $1"
        ))
        .await?;
    match conn.query_opt(&select, &[&run_id.as_str()]).await? {
        Some(row) => Ok(Some(decode(run_id, &row)?)),
        None => Ok(None),
    }
}

fn decode(run_id: &RunId, row: &tokio_postgres::Row) -> Result<Lease> {
    let pid: i64 = get(row, 1, "run_leases.pid")?;
    let workspace: String = get(row, 2, "run_leases.workspace")?;
    Ok(Lease {
        run_id: run_id.clone(),
        holder: Holder {
            machine: get(row, 0, "run_leases.machine")?,
            pid: u32::try_from(pid)
                .map_err(|_| PgStoreError::corrupt(format!("run_leases.pid {pid}")))?,
            workspace: PathBuf::from(workspace),
        },
        token: get(row, 3, "run_leases.token")?,
        claimed_at_ms: get(row, 4, "run_leases.claimed_at_ms")?,
        expires_at_ms: get(row, 5, "run_leases.expires_at_ms")?,
    })
}
