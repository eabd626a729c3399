//! The terms of a goal's contract that bound the agent — `network:`, `budget:`, `ask_before:` —
//! as a run takes them: from the approved contract, never from the plan as the agent may have
//! left it.
//!
//! The plan lies in the tree the agent writes. An edit of these lines changes the contract's
//! hash, so `complete_goal` refuses the goal until a person approves it again; meanwhile the
//! run keeps to what was approved: the approval records the terms ([`ContractTerms`]), and a
//! goal whose plan text no longer hashes to its approval gets them from there. A goal never
//! approved has none: the network stays shut and no budget of its own is granted.

use tether_plan::Goal;
use tether_store::{ContractTerms, Journal, Store, StoreError};

/// The terms of `goal`'s contract as the plan writes them.
pub fn written(goal: &Goal) -> ContractTerms {
    ContractTerms {
        network: goal.network(),
        budget: goal.budget.as_ref().map(|line| line.value.clone()),
        ask_before: goal.ask_before.iter().map(|p| p.value.clone()).collect(),
    }
}

/// The terms in force for `goal` of the plan filed under `plan_key`: its approved contract's.
/// The plan's own when its contract is the approved one; the approval's record when it was
/// edited since; `None` when it was never approved, or was edited since an approval that kept
/// no terms (an older tether's).
pub fn in_force(
    store: &Store,
    plan_key: &str,
    goal: &Goal,
) -> Result<Option<ContractTerms>, StoreError> {
    let Some(id) = goal.id() else {
        return Ok(None);
    };
    let Some(approval) = store.approval(plan_key, id)? else {
        return Ok(None);
    };
    if approval.contract_hash == goal.contract_hash() {
        return Ok(Some(written(goal)));
    }
    Ok(approval.terms)
}

/// The approved terms of one plan's goals, looked up in the store each time: for the checks a
/// run makes while the agent works (is the network open, which commands need a yes).
#[derive(Clone)]
pub struct Approvals {
    journal: Journal,
    plan_key: String,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("plan_key", &self.plan_key)
            .finish_non_exhaustive()
    }
}

impl Approvals {
    /// The approvals kept in `journal`'s store for the plan filed under `plan_key`.
    pub fn new(journal: Journal, plan_key: impl Into<String>) -> Self {
        Approvals {
            journal,
            plan_key: plan_key.into(),
        }
    }

    /// [`in_force`] for `goal`; `None` (no terms: the strictest) when the store cannot be read.
    pub fn terms(&self, goal: &Goal) -> Option<ContractTerms> {
        let found = in_force(&self.journal.store(), &self.plan_key, goal);
        match found {
            Ok(terms) => terms,
            Err(e) => {
                tracing::warn!(error = %e, goal = ?goal.id(), "could not read the goal's approval; none of its terms apply");
                None
            }
        }
    }

    /// Whether `goal` opens the network: the plan says `network: on` and so does its approved
    /// contract.
    pub fn network(&self, goal: &Goal) -> bool {
        goal.network() && self.terms(goal).is_some_and(|t| t.network)
    }
}
