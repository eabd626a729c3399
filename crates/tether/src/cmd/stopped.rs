//! The closing line and exit code of a run that stopped in a way every loop shares
//! ([`Stopped`]): one mapping for `tether run`, `tether ralph` and `tether resume`, so a new way
//! to stop gets its words and its exit code here, once.

use tether_core::looping::Stopped;
use tether_store::RunId;

use crate::exit::Exit;

/// What a loop's own wording changes in the shared closing lines.
#[derive(Debug, Clone, Copy)]
pub struct Wording {
    /// What a run whose budget ran out had not reached (` without the promise`), or nothing.
    pub budget_unmet: &'static str,
    /// Whether the line of a paused run says why it paused.
    pub pause_reason: bool,
}

/// The goal loop's wording: a paused run says why.
pub const GOAL: Wording = Wording {
    budget_unmet: "",
    pause_reason: true,
};

/// The Ralph loop's wording: a run out of budget did not keep its promise.
pub const RALPH: Wording = Wording {
    budget_unmet: " without the promise",
    pause_reason: false,
};

/// The closing line of `run`, stopped as `stopped`, and its exit code.
pub fn report(run: &RunId, stopped: &Stopped, wording: Wording) -> (String, Exit) {
    let resume = format!("continue with: tether resume {run}");
    match stopped {
        Stopped::BudgetSpent { iteration } => (
            format!(
                "budget spent after iteration {iteration}{}; {resume}",
                wording.budget_unmet
            ),
            Exit::Budget,
        ),
        Stopped::Paused { reason } if wording.pause_reason => (
            format!("run {run} paused: {reason}; {resume}"),
            Exit::Paused,
        ),
        Stopped::Paused { .. } => (format!("run {run} paused; {resume}"), Exit::Paused),
        Stopped::CannotRun { iteration, error } => (
            format!("stopped at iteration {iteration}: {error}"),
            Exit::Error,
        ),
        Stopped::Failed { iteration, error } => (
            format!(
                "stopped: iteration {iteration} was the last of several failures in a row: {error}"
            ),
            Exit::Error,
        ),
        Stopped::Cancelled => (format!("run {run} cancelled"), Exit::Interrupted),
        Stopped::LeaseLost { detail } => (
            format!(
                "stopped: another tether process drives run {run} now ({detail}); see where with: \
                 tether status {run}"
            ),
            Exit::Error,
        ),
        Stopped::Interrupted => (
            format!("run {run} interrupted; {resume}"),
            Exit::Interrupted,
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn line(stopped: Stopped, wording: Wording) -> (String, Exit) {
        report(&"r-abc".parse().unwrap(), &stopped, wording)
    }

    #[test]
    fn every_shared_end_has_its_line_and_exit_code() {
        let budget = Stopped::BudgetSpent { iteration: 3 };
        assert_eq!(
            line(budget.clone(), GOAL),
            (
                "budget spent after iteration 3; continue with: tether resume r-abc".into(),
                Exit::Budget
            )
        );
        assert_eq!(
            line(budget, RALPH).0,
            "budget spent after iteration 3 without the promise; continue with: tether resume r-abc"
        );
        let paused = Stopped::Paused {
            reason: "paused by ana".into(),
        };
        assert_eq!(
            line(paused.clone(), GOAL),
            (
                "run r-abc paused: paused by ana; continue with: tether resume r-abc".into(),
                Exit::Paused
            )
        );
        assert_eq!(
            line(paused, RALPH).0,
            "run r-abc paused; continue with: tether resume r-abc"
        );
        let cannot = Stopped::CannotRun {
            iteration: 1,
            error: "no claude".into(),
        };
        assert_eq!(
            line(cannot, GOAL),
            ("stopped at iteration 1: no claude".into(), Exit::Error)
        );
        let failed = Stopped::Failed {
            iteration: 2,
            error: "boom".into(),
        };
        assert_eq!(
            line(failed, RALPH),
            (
                "stopped: iteration 2 was the last of several failures in a row: boom".into(),
                Exit::Error
            )
        );
        assert_eq!(
            line(Stopped::Cancelled, GOAL),
            ("run r-abc cancelled".into(), Exit::Interrupted)
        );
        assert_eq!(
            line(Stopped::Interrupted, RALPH),
            (
                "run r-abc interrupted; continue with: tether resume r-abc".into(),
                Exit::Interrupted
            )
        );
        let lost = Stopped::LeaseLost {
            detail: "another process has claimed the run since".into(),
        };
        assert_eq!(
            line(lost, GOAL),
            (
                "stopped: another tether process drives run r-abc now (another process has \
                 claimed the run since); see where with: tether status r-abc"
                    .into(),
                Exit::Error
            )
        );
    }
}
