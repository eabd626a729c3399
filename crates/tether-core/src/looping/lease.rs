//! Who drives a run: the store's lease on it (see `tether_store`'s `leases.rs`), claimed when this
//! process takes the run in, renewed by a heartbeat while it drives it, released when it stops.
//!
//! Every event the loop appends to its run then presents the lease's fencing token
//! ([`Journal::fence`]): once another process has claimed the run — this one was paused past its
//! lease, or cut off from a shared store — the next event is refused, nothing more is written,
//! and the loop ends as [`super::Stopped::LeaseLost`]. The heartbeat interrupts the loop as soon
//! as it learns the lease is gone, so an agent's turn does not run on for a run that is another
//! process's now.
//!
//! The run's lock file stays beside it: it proves, on this machine, which process tree drives
//! the run (the checks of human-only acts read it), and a lease whose holder was a process of
//! this machine that no longer holds the lock (it died) is taken over at once rather than after
//! it lapses.

use std::time::Duration;

use tether_config::Workspace;
use tether_store::{Claim, Holder, Journal, Lease, RunId, StoreError};
use tokio_util::sync::CancellationToken;

use super::LoopError;
use crate::run_lock::RunLock;

/// How long a lease lasts unless renewed: about three heartbeats, so a holder that misses two
/// still holds its run.
pub const LEASE: Duration = Duration::from_secs(15);

/// How often the driving process renews its lease.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// This process driving a run: its lock, its lease and the heartbeat renewing it. Dropping it
/// stops the heartbeat, releases the lease and the lock.
pub struct Driving {
    lock: RunLock,
    lease: Lease,
    journal: Journal,
    heartbeat: tokio::task::JoinHandle<()>,
}

impl Driving {
    /// The lock's record of the process that drove the run before this one (see
    /// [`RunLock::previous`]).
    pub fn previous(&self) -> u32 {
        self.lock.previous()
    }

    /// The lease held.
    pub fn lease(&self) -> &Lease {
        &self.lease
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        self.heartbeat.abort();
        self.journal.unfence();
        let released = self
            .journal
            .store()
            .release_run(&self.lease.run_id, self.lease.token);
        if let Err(e) = released {
            tracing::warn!(run = %self.lease.run_id, "could not release the run's lease: {e}");
        }
    }
}

/// Takes `run` for this process: its lock, then its lease (a live one of another process is
/// refused, naming it), every event of the run appended through `journal` fenced by the lease
/// from now on, and a heartbeat renewing it that cancels `lost` when it learns the lease is
/// gone.
pub fn drive(
    ws: &Workspace,
    journal: &Journal,
    run: &RunId,
    lost: &CancellationToken,
) -> Result<Driving, LoopError> {
    let lock = RunLock::acquire(&super::lock_path(ws, run))?;
    let holder = Holder::this_process(ws.root());
    // This process holds the run's lock (beside the run's records, whichever tree it works
    // in): a holder of this machine is gone.
    let gone = |other: &Holder| other.machine == holder.machine;
    let claim = journal
        .store()
        .claim_run(run, &holder, millis(LEASE), &gone)?;
    let lease = match claim {
        Claim::Claimed(lease) => lease,
        Claim::Held(lease) => {
            return Err(LoopError::Driven {
                run: run.clone(),
                holder: lease.holder,
            });
        }
    };
    journal.fence(run, lease.token);
    let heartbeat = tokio::spawn(renew(journal.clone(), lease.clone(), lost.clone()));
    Ok(Driving {
        lock,
        lease,
        journal: journal.clone(),
        heartbeat,
    })
}

/// Renews `lease` every [`HEARTBEAT`] until it is gone, then cancels `lost`. A store that
/// cannot be reached is tried again at the next beat: the lease holds for a few.
async fn renew(journal: Journal, lease: Lease, lost: CancellationToken) {
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        let renewed = journal
            .store()
            .renew_run(&lease.run_id, lease.token, millis(LEASE));
        match renewed {
            Ok(_) => {}
            Err(StoreError::LeaseLost { lapse, .. }) => {
                tracing::warn!(run = %lease.run_id, "this process no longer drives the run: {lapse}");
                lost.cancel();
                return;
            }
            Err(e) => tracing::warn!(run = %lease.run_id, "could not renew the run's lease: {e}"),
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
