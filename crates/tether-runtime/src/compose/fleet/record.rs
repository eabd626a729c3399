//! What the store knows of a run of many goals (see `tether_store::Fleet`): the run recorded as
//! it begins, each goal's state written as the schedule moves it (with the goal run working on
//! it), and how the run ended. The store is for people and other machines to read; a write that
//! fails is said in the log and the run goes on.

use std::collections::HashMap;

use tether_core::fleet::{Phase, Schedule};
use tether_store::{GoalState, Journal, NewFleet, RunId};

/// The store's record of one run of many goals.
pub(super) struct Record {
    journal: Journal,
    fleet: RunId,
    /// Each goal's state as last written.
    written: HashMap<String, GoalState>,
    /// The goal run working on each goal now (or last).
    runs: HashMap<String, RunId>,
    /// Whether the goals work on workers, which write their goal's state while they hold it.
    workers: bool,
}

/// A goal's state as the store says it.
fn state_of(phase: &Phase) -> GoalState {
    match phase {
        Phase::Waiting => GoalState::Waiting,
        Phase::Working { settling: false } => GoalState::Working,
        Phase::Working { settling: true } | Phase::Conflicted => GoalState::Settling,
        Phase::SignedOff | Phase::Merging => GoalState::SignedOff,
        Phase::Merged => GoalState::Merged,
        Phase::NeedsPerson => GoalState::NeedsPerson,
        Phase::Ended => GoalState::Ended,
    }
}

impl Record {
    /// Records the run `new` in `journal`'s store, as `schedule` has it now.
    pub(super) fn begin(
        journal: Journal,
        new: &NewFleet,
        schedule: &Schedule,
        workers: bool,
    ) -> Record {
        if let Err(e) = journal.store().begin_fleet(new) {
            tracing::warn!(fleet = %new.id, "could not record the run of many goals: {e}");
        }
        let mut record = Record {
            journal,
            fleet: new.id.clone(),
            written: HashMap::new(),
            runs: HashMap::new(),
            workers,
        };
        record.sync(schedule);
        record
    }

    /// The record of the run of many goals `fleet` taken up again, as `schedule` has it now.
    pub(super) fn again(
        journal: Journal,
        fleet: &RunId,
        schedule: &Schedule,
        workers: bool,
    ) -> Record {
        let mut record = Record {
            journal,
            fleet: fleet.clone(),
            written: HashMap::new(),
            runs: HashMap::new(),
            workers,
        };
        record.sync(schedule);
        record
    }

    /// The store, for what the goals' runs spent.
    pub(super) fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Goal run `run` works on `goal` from now on.
    pub(super) fn working(&mut self, goal: &str, run: &RunId) {
        self.runs.insert(goal.to_owned(), run.clone());
        self.written.remove(goal);
    }

    /// Goal `goal` is offered to the workers (`ready`): from now on they write its state until
    /// they report its end.
    pub(super) fn offer(&mut self, goal: &str) {
        let store = self.journal.store();
        match store.set_fleet_goal(&self.fleet, goal, GoalState::Ready, None) {
            Ok(()) => {
                self.written.insert(goal.to_owned(), GoalState::Working);
            }
            Err(e) => tracing::warn!(goal, "could not offer the goal to the workers: {e}"),
        }
    }

    /// Goal `goal`'s conflicting merge is offered to the workers to settle (`conflicted`).
    pub(super) fn offer_settle(&mut self, goal: &str) {
        let store = self.journal.store();
        match store.set_fleet_goal(&self.fleet, goal, GoalState::Conflicted, None) {
            Ok(()) => {
                self.written.insert(goal.to_owned(), GoalState::Settling);
            }
            Err(e) => tracing::warn!(
                goal,
                "could not offer the goal's conflict to the workers: {e}"
            ),
        }
    }

    /// Writes every goal whose state moved since it was last written (a goal a worker holds
    /// is the worker's to write).
    pub(super) fn sync(&mut self, schedule: &Schedule) {
        for (goal, _, phase) in schedule.goals() {
            let state = state_of(phase);
            if self.workers && matches!(state, GoalState::Working | GoalState::Settling) {
                continue;
            }
            if self.written.get(goal) == Some(&state) {
                continue;
            }
            let run = self.runs.get(goal);
            match self
                .journal
                .store()
                .set_fleet_goal(&self.fleet, goal, state, run)
            {
                Ok(()) => {
                    self.written.insert(goal.to_owned(), state);
                }
                Err(e) => tracing::warn!(goal, "could not record where the goal stands: {e}"),
            }
        }
    }

    /// Records how the run ended.
    pub(super) fn end(&mut self, schedule: &Schedule, outcome: &str) {
        self.sync(schedule);
        if let Err(e) = self.journal.store().end_fleet(&self.fleet, outcome) {
            tracing::warn!(fleet = %self.fleet, "could not record the end of the run: {e}");
        }
    }
}
