//! The `iterations` projection: one row per iteration, derived from iteration events.
//!
//! The rule for which row an event touches lives here, as a pure function of the run state
//! before the event, so the SQL writer ([`crate::Store::append`]) and the in-memory rebuild
//! ([`crate::Store::rebuild_iterations`]) share it and a test can compare their results.

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::ids::RunId;
use crate::state::RunState;
use crate::vocab::IterationOutcome;

/// One iteration of a run, as projected from its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iteration {
    /// The run.
    pub run_id: RunId,
    /// The iteration number (from 1).
    pub n: u32,
    /// When it (last) started.
    pub started_at_ms: i64,
    /// When it ended, if it has.
    pub ended_at_ms: Option<i64>,
    /// How it ended, if it has.
    pub outcome: Option<IterationOutcome>,
    /// The completion summary or the failure's error text.
    pub summary: Option<String>,
}

/// A change to one `iterations` row, so every backend projects iterations the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IterationWrite {
    /// Insert the row, or reset it if the iteration is being run again.
    Start {
        /// The iteration.
        n: u32,
    },
    /// Record how it ended; inserts the row (started now) if its start was never seen.
    End {
        /// The iteration.
        n: u32,
        /// How it ended.
        outcome: IterationOutcome,
        /// Its summary, or the error that ended it.
        summary: String,
    },
    /// Mark it interrupted, unless it already ended.
    Interrupt {
        /// The iteration.
        n: u32,
    },
}

/// The row changes `event` causes, given the run's state just before it.
pub fn writes_for(before: &RunState, event: &Event) -> Vec<IterationWrite> {
    let interrupt_other = |except: Option<u32>| {
        before
            .in_progress
            .filter(|&m| Some(m) != except)
            .map(|n| IterationWrite::Interrupt { n })
    };
    match event {
        Event::IterationStarted { n } => interrupt_other(Some(*n))
            .into_iter()
            .chain([IterationWrite::Start { n: *n }])
            .collect(),
        Event::IterationCompleted { n, summary } => vec![IterationWrite::End {
            n: *n,
            outcome: IterationOutcome::Completed,
            summary: summary.clone(),
        }],
        Event::IterationFailed { n, error } => vec![IterationWrite::End {
            n: *n,
            outcome: IterationOutcome::Failed,
            summary: error.clone(),
        }],
        Event::RunStarted { .. }
        | Event::Paused { .. }
        | Event::Resumed { .. }
        | Event::RunFinished { .. } => interrupt_other(None).into_iter().collect(),
        Event::ToolCalled { .. }
        | Event::PermissionDecided { .. }
        | Event::IterationUsage { .. }
        | Event::JudgeUsage { .. }
        | Event::NothingChanged { .. }
        | Event::FreshContext { .. }
        | Event::BudgetSpent { .. }
        | Event::BudgetRaised { .. }
        | Event::PauseRequested { .. }
        | Event::CancelRequested { .. }
        | Event::MessageQueued { .. }
        | Event::SideQuestion { .. }
        | Event::MessageDelivered { .. }
        | Event::QuestionAsked { .. }
        | Event::QuestionAnswered { .. }
        | Event::QuestionCancelled { .. }
        | Event::QuestionAbandoned { .. }
        | Event::QuestionAwaited { .. }
        | Event::QuestionRepeated { .. }
        | Event::RuleFired { .. }
        | Event::GoalVerdict { .. }
        | Event::ContractApproved { .. }
        | Event::FleetStarted { .. }
        | Event::FleetGoalMoved { .. }
        | Event::FleetEnded { .. }
        // The iteration stays started: it runs again once the limit is waited out.
        | Event::WaitingForUsageLimit { .. } => Vec::new(),
    }
}

/// Applies a write to an in-memory set of rows ordered by `n` (the rebuild's counterpart of the
/// SQL in `journal.rs`).
pub fn apply_write(
    rows: &mut std::collections::BTreeMap<u32, Iteration>,
    run_id: &RunId,
    at_ms: i64,
    write: &IterationWrite,
) {
    // An iteration `n` starting now (an end with no start recorded starts then too).
    let started = |n: u32| Iteration {
        run_id: run_id.clone(),
        n,
        started_at_ms: at_ms,
        ended_at_ms: None,
        outcome: None,
        summary: None,
    };
    match write {
        IterationWrite::Start { n } => {
            rows.insert(*n, started(*n));
        }
        IterationWrite::End {
            n,
            outcome,
            summary,
        } => {
            let row = rows.entry(*n).or_insert_with(|| started(*n));
            row.ended_at_ms = Some(at_ms);
            row.outcome = Some(*outcome);
            row.summary = Some(summary.clone());
        }
        IterationWrite::Interrupt { n } => {
            if let Some(row) = rows.get_mut(n).filter(|row| row.outcome.is_none()) {
                row.ended_at_ms = Some(at_ms);
                row.outcome = Some(IterationOutcome::Interrupted);
            }
        }
    }
}
