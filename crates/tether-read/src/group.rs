//! The group a person looks for a run in, with the runs that need them first. A run that waits
//! for a person is never shown as working: waiting for an answer, stopped by a guard for a
//! person, or holding a question nobody answered is "needs input", whatever else it does.

use serde::Serialize;
use tether_store::RunStatus;

use crate::RunHeader;

/// Where a run is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// A person is needed: a question waits for an answer, or a guard stopped the run for one.
    NeedsInput,
    /// A process drives it (or, on another machine, its journal says one does).
    Running,
    /// Stopped, and it can be taken up: paused, its budget spent, or its process killed.
    Paused,
    /// Ended: done, failed or cancelled.
    Done,
}

impl Group {
    /// Every group, in the order they are shown.
    pub const ALL: [Group; 4] = [
        Group::NeedsInput,
        Group::Running,
        Group::Paused,
        Group::Done,
    ];

    /// The group of `run`.
    pub fn of(run: &RunHeader) -> Group {
        match run.status {
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled => Group::Done,
            RunStatus::WaitingForInput | RunStatus::Blocked => Group::NeedsInput,
            _ if run.pending_questions > 0 => Group::NeedsInput,
            RunStatus::Running if !run.orphaned => Group::Running,
            RunStatus::Running | RunStatus::Paused | RunStatus::BudgetExhausted => Group::Paused,
        }
    }

    /// Its name in JSON and in a page's ids: `needs_input`, `running`, `paused`, `done`.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::NeedsInput => "needs_input",
            Group::Running => "running",
            Group::Paused => "paused",
            Group::Done => "done",
        }
    }

    /// How the group is titled: `Needs input`, `Running`, `Paused`, `Done`.
    pub fn title(self) -> &'static str {
        match self {
            Group::NeedsInput => "Needs input",
            Group::Running => "Running",
            Group::Paused => "Paused",
            Group::Done => "Done",
        }
    }
}

/// `runs` in their groups, in the order of [`Group::ALL`], each group's runs in the order given
/// (newest first, as the store lists them); empty groups left out.
pub fn grouped(runs: Vec<RunHeader>) -> Vec<(Group, Vec<RunHeader>)> {
    let mut out: Vec<(Group, Vec<RunHeader>)> =
        Group::ALL.iter().map(|g| (*g, Vec::new())).collect();
    for run in runs {
        let group = Group::of(&run);
        if let Some((_, list)) = out.iter_mut().find(|(g, _)| *g == group) {
            list.push(run);
        }
    }
    out.retain(|(_, list)| !list.is_empty());
    out
}
