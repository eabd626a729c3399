//! Taking a run into this process: creating a new one, or taking a stopped one up again, each
//! under the run's lock and its lease in the store (see `lease.rs`), so that only one process
//! ever drives a run.

use std::path::PathBuf;

use tether_config::Workspace;
use tether_store::{Event, Journal, Run, RunId, RunKind, RunStatus, StoreError};

use tokio_util::sync::CancellationToken;

use super::LoopError;
use super::lease::{self, Driving};
use crate::bounds::Pinned;
use crate::run_lock::{LockError, RunLock};

/// `.tether/runs/<run>/lock`.
pub fn lock_path(ws: &Workspace, run: &RunId) -> PathBuf {
    ws.run_lock(run.as_str())
}

/// Creates a run of `kind` with `spec` (stored as JSON, with its configuration as `config`
/// recorded it, under [`crate::bounds::SPEC_KEY`], and the workspace as the run begins, `began`,
/// under [`tether_git::SPEC_KEY`]), under `id` when one was drawn for it, and takes it for
/// this process (its lock and lease, `lost` cancelled if the lease is lost: see `lease.rs`),
/// until the returned [`Driving`] is dropped.
pub fn open_new<S: serde::Serialize>(
    ws: &Workspace,
    journal: &Journal,
    kind: RunKind,
    (spec, config): (&S, Option<&Pinned>),
    began: &tether_git::Start,
    (id, lost): (Option<&RunId>, &CancellationToken),
) -> Result<(RunId, Driving), LoopError> {
    let mut spec = serde_json::to_value(spec).map_err(StoreError::from)?;
    if let (Some(config), Some(fields)) = (config, spec.as_object_mut()) {
        fields.insert(crate::bounds::SPEC_KEY.to_owned(), config.to_json());
    }
    began.record(&mut spec);
    let store = journal.store();
    let run = match id {
        Some(id) => store.create_run_as(id, kind, ws.root(), &spec)?,
        None => store.create_run(kind, ws.root(), &spec)?,
    };
    drop(store);
    let driving = lease::drive(ws, journal, &run, lost)?;
    Ok((run, driving))
}

/// Whether resuming starts the iteration budget again from zero: a run stopped by its own
/// iteration budget that nobody raised (a plain `tether resume` grants a new one). Budgets in
/// other units are raised explicitly (`tether resume --add-tokens …`).
fn resets_iterations(state: &tether_store::RunState) -> bool {
    state.status == RunStatus::BudgetExhausted
        && state.budget_spent.as_ref().is_none_or(|spent| {
            spent.overrun.unit == tether_store::Unit::Iterations
                && spent.goal_id.is_none()
                && !spent.raised
        })
}

/// How long what a killed driver left running is given to stop after SIGTERM.
const LEFTOVER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes a stopped run of `kind` up again for `by`: locks it, checks its kind and that it has
/// not ended, decodes its spec, and records `resumed` (resetting the budget when it was spent,
/// and with the configuration when a person `accepted` a change of it). The run is this
/// process's (its lock and lease, `lost` cancelled if the lease is lost) until the returned
/// [`Driving`] is dropped.
pub fn reopen<S: serde::de::DeserializeOwned>(
    ws: &Workspace,
    journal: &Journal,
    run: &RunId,
    kind: RunKind,
    (by, accepted, lost): (&str, Option<&Pinned>, &CancellationToken),
) -> Result<(Driving, S), LoopError> {
    let driving = lease::drive(ws, journal, run, lost)?;
    // A driver killed outright could not stop its agent: stop what it left running first, so
    // two agents never work the same run.
    tether_tools::leftovers::stop_leftovers(driving.previous(), LEFTOVER_GRACE);
    let record = journal.store().run(run)?;
    let not_this = |detail: String| LoopError::NotThisKind {
        run: run.clone(),
        expected: kind,
        detail,
    };
    if record.kind != kind {
        return Err(not_this(format!("it is a {} run", record.kind.as_str())));
    }
    let spec: S =
        serde_json::from_value(record.spec.clone()).map_err(|e| not_this(e.to_string()))?;
    not_ended(&record)?;
    journal.append(
        run,
        &Event::Resumed {
            by: by.to_owned(),
            reset_budget: resets_iterations(&record.state),
            settings: accepted.map(Pinned::to_json),
        },
    )?;
    Ok((driving, spec))
}

/// Refuses to resume a run that ended, or that another process drives now (its lock held here,
/// or its lease live in `store`): what a caller checks before it prepares a resume (a sandbox,
/// a dashboard), so the refusal comes first; [`reopen`] checks again as it takes the run.
pub fn resumable(ws: &Workspace, store: &tether_store::Store, run: &Run) -> Result<(), LoopError> {
    not_ended(run)?;
    if let Some(pid) = RunLock::holder(&lock_path(ws, &run.id)) {
        return Err(LoopError::Lock(LockError::Held { pid }));
    }
    match store.run_lease(&run.id)? {
        // A holder of this machine that holds no lock here is gone.
        Some(lease) if lease.holder.machine != tether_store::this_machine() => {
            Err(LoopError::Driven {
                run: run.id.clone(),
                holder: lease.holder,
            })
        }
        _ => Ok(()),
    }
}

/// Refuses a run that ended for good (completed, cancelled, failed): there is nothing to
/// resume.
fn not_ended(run: &Run) -> Result<(), LoopError> {
    if tether_store::control::is_ended(run.state.status) {
        return Err(LoopError::Ended {
            run: run.id.clone(),
            status: run.state.status,
        });
    }
    Ok(())
}
