//! The goal loop (`tether run`): iterations toward the plan's active goals until every one is
//! signed off by the completion check, the budget runs out, or a rule stops the run. A run
//! scoped to some goals ([`GoalSpec::scope`]) works on those alone and leaves the plan's other
//! goals be (`scope.rs`).
//!
//! The iteration skeleton is the shared driver's ([`crate::looping`]); an iteration of this loop
//! is five named steps: **reconcile** the plan with the store's sign-offs, build the **prompt**
//! (the framing, the plan injection and the feedback owed, see [`crate::prompts::goal`]),
//! **run** the agent's turn (the driver), **observe** what it did (tool calls, file and plan
//! changes, sign-off attempts in the store), and **decide** with the [`rules`]. Like the Ralph loop, every step is a journal event, so a run can be paused,
//! cancelled, killed and resumed; the plan and the store, not the model's memory, say where the
//! work stands.

mod breaker;
mod cycle;
pub mod observe;
mod reconcile;
pub mod rules;
mod run;
mod scope;
mod verdicts;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use tether_config::IterationContext;
use tether_store::{Budget, Rule};

pub use crate::looping::{Deps, LoopError, Stopped, UsageWaits};
pub use rules::RuleSettings;
pub use run::{ready, resume, start};

/// A goal loop's parameters, stored as the run's spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalSpec {
    /// The plan file, relative to the workspace root.
    pub plan: String,
    /// The budget; `None` is unlimited (asked for explicitly).
    pub max_iterations: Option<u32>,
    /// The budgets in tokens, dollars and time (its `iterations` is unused: that is
    /// `max_iterations`); unset units are unlimited.
    #[serde(default)]
    pub budget: Budget,
    /// The interaction threshold (0–5) the prompt announces.
    pub threshold: u8,
    /// Sign-off by verify alone (`--no-judge`).
    pub no_judge: bool,
    /// The rules.
    pub rules: RuleSettings,
    /// Failed iterations (agent errors) in a row that stop the run.
    pub max_consecutive_failures: u32,
    /// What the agent keeps between iterations (`[loop] context`); a run recorded before the
    /// setting existed started every iteration fresh.
    #[serde(default)]
    pub context: IterationContext,
    /// The goals the run works on, by id: of the plan's active goals, only these are worked
    /// on, shown to the agent and signed off, and the run is done once each of them is signed
    /// off or cancelled, whatever other goals are still active. `None` (and a run recorded
    /// before the setting existed): every active goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<BTreeSet<String>>,
    /// Set when the run settles a conflict: the goal of a run of many goals was signed off, and
    /// merging the run's branch into the goal's left conflict markers. The goal is worked on
    /// again, and only a sign-off made in this run counts (the earlier one was of the work
    /// before the merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settling: Option<Settling>,
}

/// The conflict a goal's run settles ([`GoalSpec::settling`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settling {
    /// The branch merged into the goal's: the run's, with the other goals' work.
    pub branch: String,
    /// The paths the merge left with conflict markers.
    pub paths: Vec<String>,
}

/// How a goal loop ended (or stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalEnd {
    /// Every goal of the run was signed off (or cancelled).
    AllDone {
        /// The last iteration run (0 if none was needed).
        iteration: u32,
        /// The goals signed off during the run.
        signed_off: Vec<String>,
    },
    /// A rule blocked the run (the spin guard).
    Blocked {
        /// The rule.
        rule: Rule,
        /// Why.
        reason: String,
    },
    /// It stopped in a way every loop shares (a rule's pause among them).
    Stopped(Stopped),
}

impl GoalEnd {
    /// The run paused for a person, for `reason`.
    pub fn paused(reason: String) -> Self {
        GoalEnd::Stopped(Stopped::Paused { reason })
    }
}

impl From<Stopped> for GoalEnd {
    fn from(stopped: Stopped) -> Self {
        GoalEnd::Stopped(stopped)
    }
}
