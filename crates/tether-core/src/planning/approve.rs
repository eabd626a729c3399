//! Locking contracts: a human agrees to a goal's `done_when`, `verify`, `failure_modes`,
//! `ask_before`, `budget` and `network`, and its hash is recorded in the store with the terms
//! that bound the agent (see [`super::terms`]).
//!
//! Approval goes in two steps so a caller can show the contracts (and ask) before recording:
//! [`prepare`] adds missing ids to the plan (a patch: nothing else in the file changes) and
//! picks the goals; [`record`] records the hashes that were shown, so a human is never said to
//! have approved a version they did not see. [`approve`] does both.

use tether_plan::{AssignedId, PatchError, PlanDoc};
use tether_store::{Approval, Store, StoreError};

use super::contracts::{GoalContract, contract_states};
use super::{PlanRef, PlanningError};
use tether_plan::file::{self as plan_file, PlanFileError};

/// Which goals to approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every open or active goal whose contract was never approved or changed since.
    Pending,
    /// These goals, whatever their state (an unknown id is an error).
    Ids(Vec<String>),
}

/// The plan with ids added and the goals chosen, ready to show and then [`record`].
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The plan as it is now (after the ids were added).
    pub doc: PlanDoc,
    /// Ids that were added to goals that had none.
    pub assigned: Vec<AssignedId>,
    /// The chosen goals with their states, in plan order. With [`Selection::Ids`] this may
    /// include goals already approved; [`GoalContract::needs_approval`] tells them apart.
    pub goals: Vec<GoalContract>,
}

/// What [`approve`] did.
#[derive(Debug, Clone)]
pub struct Approved {
    /// Ids that were added to goals that had none.
    pub assigned: Vec<AssignedId>,
    /// The goals approved now, with their state before, and the approval recorded.
    pub approved: Vec<(GoalContract, Approval)>,
    /// Chosen goals whose contract was already approved as it is (nothing recorded).
    pub already: Vec<GoalContract>,
}

/// Gives every goal without an id one, as a patch of the plan file. Returns the plan as it is
/// afterwards and the ids added. Fails, naming file and line, when the plan does not parse.
pub fn add_missing_ids(plan: &PlanRef) -> Result<(PlanDoc, Vec<AssignedId>), PlanFileError> {
    let mut assigned = Vec::new();
    let doc = plan_file::patch(&plan.path, |doc| {
        let (patch, ids) = doc.add_missing_ids()?;
        assigned = ids;
        Ok(patch)
    })?;
    doc.check().map_err(PatchError::from)?;
    Ok((doc, assigned))
}

/// Adds missing ids, then picks the goals `selection` names. An id no goal has is an error
/// listing the ids that exist.
pub fn prepare(
    store: &Store,
    plan: &PlanRef,
    selection: &Selection,
) -> Result<Prepared, PlanningError> {
    let (doc, assigned) = add_missing_ids(plan)?;
    let states = contract_states(store, &plan.key, doc.plan())?;
    let goals = match selection {
        Selection::Pending => states
            .into_iter()
            .filter(|g| g.is_workable() && g.needs_approval())
            .collect(),
        Selection::Ids(ids) => {
            for id in ids {
                if !states.iter().any(|g| &g.id == id) {
                    return Err(PlanFileError::from(PatchError::UnknownGoal {
                        path: plan.path.clone(),
                        id: id.clone(),
                        known: states.iter().map(|g| g.id.clone()).collect(),
                    })
                    .into());
                }
            }
            states.into_iter().filter(|g| ids.contains(&g.id)).collect()
        }
    };
    Ok(Prepared {
        doc,
        assigned,
        goals,
    })
}

/// Records `by`'s approval of each goal's contract as `goals` holds it (the hash that was
/// shown), with the terms that bound the agent as `doc` (the plan they were read from) writes
/// them.
pub fn record(
    store: &Store,
    plan_key: &str,
    doc: &PlanDoc,
    goals: &[GoalContract],
    by: &str,
) -> Result<Vec<Approval>, StoreError> {
    goals
        .iter()
        .map(|g| {
            let terms = doc
                .plan()
                .goals
                .get(g.index)
                .filter(|goal| goal.contract_hash() == g.hash)
                .map(super::terms::written);
            match terms {
                Some(terms) => store.approve_contract_terms(plan_key, &g.id, &g.hash, &terms, by),
                None => store.approve_contract(plan_key, &g.id, &g.hash, by),
            }
        })
        .collect()
}

/// [`prepare`], then [`record`] every chosen goal that needs approval.
pub fn approve(
    store: &Store,
    plan: &PlanRef,
    selection: &Selection,
    by: &str,
) -> Result<Approved, PlanningError> {
    let prepared = prepare(store, plan, selection)?;
    let (todo, already): (Vec<GoalContract>, Vec<GoalContract>) = prepared
        .goals
        .into_iter()
        .partition(GoalContract::needs_approval);
    let approvals = record(store, &plan.key, &prepared.doc, &todo, by)?;
    Ok(Approved {
        assigned: prepared.assigned,
        approved: todo.into_iter().zip(approvals).collect(),
        already,
    })
}
