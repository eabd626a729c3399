//! The plan as a front end shows it: the flags on its goals only the store can tell.

use tether_core::planning::{ContractState, contract_states};
use tether_plan::render::Flag;
use tether_plan::{Plan, Status};
use tether_store::{Store, StoreError};

/// The flags only the store can tell: a `done` goal never signed off, a contract changed since
/// it was approved; and the milder note on an active goal whose contract was never approved.
pub fn flags(
    store: &Store,
    plan_key: &str,
    plan: &Plan,
) -> Result<(Vec<Flag>, Vec<Flag>), StoreError> {
    let mut flags = Vec::new();
    let mut notes = Vec::new();
    for (index, goal) in plan.goals.iter().enumerate() {
        if goal.status() != Status::Done {
            continue;
        }
        let signed = match goal.id() {
            Some(id) => store.has_accepted_signoff(plan_key, id)?,
            None => false,
        };
        if !signed {
            flags.push(Flag {
                goal: index,
                message: "done, but no sign-off is recorded: goals are signed off through \
                          complete_goal (verify, then the judge)"
                    .to_owned(),
            });
        }
    }
    for c in contract_states(store, plan_key, plan)? {
        match &c.state {
            ContractState::Changed {
                approved_by,
                approved_at_ms,
            } if c.status != Status::Cancelled => flags.push(Flag {
                goal: c.index,
                message: format!(
                    "contract changed since {approved_by} approved it on {}; it cannot be \
                     signed off until approved again: tether plan approve {}",
                    tether_core::planning::cards::utc(*approved_at_ms),
                    c.id
                ),
            }),
            ContractState::NeverApproved if c.status == Status::Active => notes.push(Flag {
                goal: c.index,
                message: format!("contract not approved yet: tether plan approve {}", c.id),
            }),
            _ => {}
        }
    }
    flags.sort_by_key(|f| f.goal);
    Ok((flags, notes))
}
