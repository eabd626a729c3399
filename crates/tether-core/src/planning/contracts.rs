//! Contract states as the store records approvals: [`tether_plan::contract_states`] with the
//! approval in force looked up in the store under the plan's key.

use tether_plan::{ApprovedContract, Plan};
use tether_store::{Store, StoreError};

pub use tether_plan::{ContractState, GoalContract};

/// The contract state of every goal of `plan` that has a usable id, in plan order, looked up
/// under `plan_key` (see [`super::PlanRef::key`]).
pub fn contract_states(
    store: &Store,
    plan_key: &str,
    plan: &Plan,
) -> Result<Vec<GoalContract>, StoreError> {
    tether_plan::contract_states(plan, |id| {
        Ok(store.approval(plan_key, id)?.map(|a| ApprovedContract {
            hash: a.contract_hash,
            by: a.approved_by,
            at_ms: a.approved_at_ms,
        }))
    })
}
