//! Sign-off attempts as the goal loop reads them from the store: the ones an iteration made
//! (for the rules), and, on resume, the rejects the last iteration left owed to the next prompt;
//! in a scoped run, only those at the goals of its scope.
//! Each record's kind says what happened; nothing here reads the reason's wording.

use tether_store::{Event, RunId, Seq, VerdictKind, VerdictRecord};

use super::cycle::GoalLoop;
use super::observe::text_hash;
use super::rules::Attempt;
use super::{Deps, GoalSpec, LoopError};
use crate::looping::At;
use crate::prompts::Feedback;

impl GoalLoop {
    /// The sign-off attempts at the run's goals recorded since the last look (whichever
    /// process made them: the agent's tool, or `tether goal complete` from its shell).
    pub(super) fn attempts(&mut self, at: At<'_>) -> Result<Vec<Attempt>, LoopError> {
        let mut records = at
            .deps
            .journal
            .store()
            .verdicts_after(&self.spec.plan, self.last_verdict)?;
        if let Some(last) = records.last() {
            self.last_verdict = last.id;
        }
        records.retain(|r| self.spec.works_on(&r.decision.goal_id));
        // An accept without the judge counts only in a run started without one; the reconcile
        // step sets such a goal back to active.
        for r in &records {
            let judged = r.decision.judge_model.is_some() || self.spec.no_judge;
            if r.decision.kind == VerdictKind::Accepted && judged {
                self.signed_off.push(r.decision.goal_id.clone());
            }
        }
        let mut attempts: Vec<Attempt> = records.iter().map(attempt).collect();
        attempts.extend(self.refused_unchanged(at)?);
        Ok(attempts)
    }

    /// The sign-offs refused during the iteration because nothing had changed since a
    /// rejection (`nothing_changed` events after the turn began), as rejections.
    fn refused_unchanged(&self, at: At<'_>) -> Result<Vec<Attempt>, LoopError> {
        let events = at
            .deps
            .journal
            .store()
            .events(at.run, self.turn_began, usize::MAX)?;
        Ok(events
            .into_iter()
            .filter_map(|e| match e.event {
                Some(Event::NothingChanged {
                    goal_id,
                    since_attempt,
                }) if self.spec.works_on(&goal_id) => Some(Attempt {
                    goal: goal_id,
                    kind: VerdictKind::JudgeRejected,
                    failed_verify: None,
                    reason: format!(
                        "nothing changed since attempt {since_attempt}, which was rejected"
                    ),
                    missing: Vec::new(),
                    unchanged: true,
                }),
                _ => None,
            })
            .collect())
    }
}

/// A recorded verdict as the rules see it.
fn attempt(record: &VerdictRecord) -> Attempt {
    let d = &record.decision;
    Attempt {
        goal: d.goal_id.clone(),
        kind: d.kind,
        failed_verify: (d.kind == VerdictKind::VerifyFailed).then(|| text_hash(&d.reason)),
        reason: d.reason.clone(),
        missing: d.missing.clone(),
        unchanged: false,
    }
}

/// What the run's last iteration left owed to the next prompt when the process stopped (the
/// budget ran out, a pause, a kill): its rejected sign-offs of the run's goals and what it said
/// it did.
pub(super) fn owed_before_stop(
    deps: &Deps,
    run: &RunId,
    spec: &GoalSpec,
) -> Result<Vec<Feedback>, LoopError> {
    let store = deps.journal.store();
    let events = store.events(run, Seq(0), usize::MAX)?;
    let Some(start) = events
        .iter()
        .rposition(|e| matches!(e.event, Some(Event::IterationStarted { .. })))
    else {
        return Ok(Vec::new());
    };
    let since = events[start].at_ms;
    let mut owed: Vec<Feedback> = store
        .verdicts_after(&spec.plan, 0)?
        .iter()
        .filter(|v| v.decision.run_id.as_ref() == Some(run) && v.created_at_ms >= since)
        .filter(|v| spec.works_on(&v.decision.goal_id))
        .map(attempt)
        .filter(|a| a.kind != VerdictKind::Accepted)
        .map(|a| Feedback::Rejected {
            goal: a.goal,
            reason: a.reason,
            missing: a.missing,
        })
        .collect();
    if let Some(Event::IterationCompleted { n, summary }) =
        events[start..].iter().find_map(|e| match &e.event {
            Some(ev @ Event::IterationCompleted { .. }) => Some(ev.clone()),
            _ => None,
        })
        && !summary.is_empty()
    {
        owed.push(Feedback::Continuation { n, summary });
    }
    Ok(owed)
}
