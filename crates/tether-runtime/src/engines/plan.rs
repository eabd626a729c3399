//! The plan as a front end shows it (the flags on its goals only the store can tell), and a
//! person's change of a goal's contract that stays approved (a criterion added).

use tether_config::{Config, Workspace};
use tether_core::planning::{ContractState, contract_states};
use tether_plan::render::Flag;
use tether_plan::{Plan, Status};
use tether_store::{Store, StoreError};

use crate::error::{Error, Result};

/// Adds `criterion` to goal `id`'s `done_when` in `config`'s plan, logs it, and approves the
/// changed contract as `who`, who added it: `done_when` as it is now, and the contract's hash.
pub fn add_criterion(
    (ws, config): (&Workspace, &Config),
    store: &Store,
    (id, criterion): (&str, &str),
    who: &str,
) -> Result<(String, String)> {
    let path = config.plan_path(ws.root());
    let doc = tether_plan::file::patch(&path, |doc| doc.add_criterion(id, criterion))
        .map_err(Error::PlanChange)?;
    let entry = format!("criterion added to {id} by {who}: {}", criterion.trim());
    tether_plan::file::patch(&path, |doc| doc.append_log(&entry)).map_err(Error::PlanChange)?;
    let goal = doc
        .plan()
        .goal(id)
        .ok_or_else(|| Error::GoalGone(id.to_owned()))?;
    let hash = goal.contract_hash();
    store.approve_contract_terms(
        &tether_signoff::plan_key(ws, &path),
        id,
        &hash,
        &tether_core::planning::terms::written(goal),
        who,
    )?;
    let done_when = goal.done_when.as_ref().map_or("", |d| d.value.as_str());
    Ok((done_when.to_owned(), hash))
}

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
