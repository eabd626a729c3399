//! Plan mode and contract approval: goals are drafted, then agreed, before any code is written.
//!
//! - [`contracts`]: for each goal, whether the human-approved contract (a hash of `done_when`,
//!   `verify`, `failure_modes`, `ask_before`) still matches the plan.
//! - [`approve`]: locking contracts — ids are added to the plan first (as a patch, never a
//!   re-serialisation), then each chosen goal's hash is recorded in the store with who approved
//!   and the terms that bound the agent.
//! - [`terms`]: what a goal's approved contract says of the network, its budget and
//!   `ask_before`, as a run takes them (the approval's record, not the plan as it is now).
//! - [`draft`], [`plan_tools`] and [`baseline`]: the drafting agent. It explores the
//!   repository read-only and may write only the plan file, through tools that refuse a plan
//!   that does not parse or that drops goals or log entries it had ([`baseline`]); tether checks
//!   the draft afterwards and sends the agent back once when it is short of the contract format.
//!
//! - [`cards`]: a contract as the person approving it reads it.
//!
//! Nothing here prints; the binary shows drafts, menus and what was locked.

pub mod approve;
pub mod baseline;
pub mod cards;
pub mod contracts;
pub mod draft;
pub mod plan_tools;
pub mod terms;

use std::path::PathBuf;

use tether_config::Config;
use tether_store::StoreError;

use tether_config::Workspace;
use tether_plan::file::PlanFileError;

pub use approve::{Approved, Prepared, Selection};
pub use baseline::Baseline;
pub use contracts::{ContractState, GoalContract, contract_states};
pub use draft::{Draft, DraftError, Drafter};
pub use plan_tools::{PlanTarget, drafting_tools, plan_tools};

/// The plan file of a workspace: where it is, and the name the store files its approvals and
/// verdicts under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRef {
    /// The file on disk.
    pub path: PathBuf,
    /// `plan` as tether.toml names it (relative to the workspace root, usually `plan.md`): the
    /// key of the plan's approvals and verdicts in the store.
    pub key: String,
}

impl PlanRef {
    /// The plan file `config` names in `ws`.
    pub fn new(ws: &Workspace, config: &Config) -> Self {
        PlanRef {
            path: config.plan_path(ws.root()),
            key: config.plan.to_string_lossy().into_owned(),
        }
    }
}

/// Approving or checking contracts failed.
#[derive(Debug, thiserror::Error)]
pub enum PlanningError {
    /// The plan file is missing, is not UTF-8, does not parse, or names no such goal; each
    /// message names the file (and the line). Fix the file or the id and try again.
    #[error(transparent)]
    Plan(#[from] PlanFileError),
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl PlanningError {
    /// Whether the user can fix this by changing the plan or the command (exit code 2), rather
    /// than a failure of tether or the machine.
    pub fn is_usage(&self) -> bool {
        matches!(self, PlanningError::Plan(e) if e.is_usage())
    }
}
