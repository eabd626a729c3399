//! Contract states: does each goal's contract still match what a human approved?
//!
//! A goal's contract hash ([`Goal::contract_hash`](crate::Goal::contract_hash)) is compared with
//! the approval in force, which the caller looks up (the store keeps approvals; this crate knows
//! no store). Goals without a usable id (none yet, an invalid one, or one shared with another
//! goal) have no state: approvals are keyed by id, so they are left out until the id is fixed.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::{Plan, ProblemKind, Status};

/// An approval in force for a goal, as the caller's record keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedContract {
    /// The hash of the approved contract.
    pub hash: String,
    /// Who approved it.
    pub by: String,
    /// When (ms since the Unix epoch).
    pub at_ms: i64,
}

/// Where a goal's contract stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ContractState {
    /// The approved hash is the current one.
    Approved,
    /// No approval was ever recorded for this goal.
    NeverApproved,
    /// The contract was edited after it was approved; a human must approve it again.
    Changed {
        /// Who approved the earlier version.
        approved_by: String,
        /// When (ms since the Unix epoch).
        approved_at_ms: i64,
    },
}

/// One goal's contract and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GoalContract {
    /// The goal's index in `Plan::goals`.
    pub index: usize,
    /// The goal's id.
    pub id: String,
    /// The goal's title.
    pub title: String,
    /// The goal's status.
    pub status: Status,
    /// The current contract hash.
    pub hash: String,
    /// How the current hash compares with the approval in force.
    pub state: ContractState,
}

impl GoalContract {
    /// Whether a human must approve this contract (it never was, or it changed since).
    pub fn needs_approval(&self) -> bool {
        self.state != ContractState::Approved
    }

    /// Whether the goal is open or active, so a goal loop may work on it.
    pub fn is_workable(&self) -> bool {
        !self.status.is_closed()
    }
}

/// The contract state of every goal of `plan` that has a usable id, in plan order; `approval`
/// looks up the approval in force for a goal id.
pub fn contract_states<E>(
    plan: &Plan,
    mut approval: impl FnMut(&str) -> Result<Option<ApprovedContract>, E>,
) -> Result<Vec<GoalContract>, E> {
    // Counted once up front: a per-goal scan of every goal and problem would make a large plan
    // quadratic.
    let mut uses: HashMap<&str, usize> = HashMap::with_capacity(plan.goals.len());
    for id in plan.goals.iter().filter_map(|g| g.id()) {
        *uses.entry(id).or_default() += 1;
    }
    let bad_id: HashSet<usize> = plan
        .problems
        .iter()
        .filter(|p| matches!(p.kind, ProblemKind::InvalidId | ProblemKind::DuplicateId))
        .filter_map(|p| p.goal)
        .collect();
    let mut out = Vec::new();
    for (index, goal) in plan.goals.iter().enumerate() {
        let Some(id) = goal.id() else { continue };
        let unusable = bad_id.contains(&index) || uses.get(id).copied().unwrap_or(0) > 1;
        if unusable {
            continue;
        }
        let hash = goal.contract_hash();
        let state = match approval(id)? {
            None => ContractState::NeverApproved,
            Some(a) if a.hash == hash => ContractState::Approved,
            Some(a) => ContractState::Changed {
                approved_by: a.by,
                approved_at_ms: a.at_ms,
            },
        };
        out.push(GoalContract {
            index,
            id: id.to_owned(),
            title: goal.title.clone(),
            status: goal.status(),
            hash,
            state,
        });
    }
    Ok(out)
}
