//! Driving a goal loop: start, resume, and the iteration cycle.

use std::collections::BTreeSet;

use tether_agent::{ExecError, TurnRequest};
use tether_plan::{PlanDoc, Status};
use tether_store::{Event, Outcome, RunId, RunKind, Verdict, VerdictRecord};
use tokio_util::sync::CancellationToken;

use super::observe::{fingerprint, text_hash};
use super::rules::{Attempt, Observation, Rules, Stop};
use super::{Deps, GoalEnd, GoalError, GoalSpec};
use crate::looping::{self, Recorder, chain, summary, watch_for_cancel};
use crate::prompts::goal::{self as prompt, Feedback};
use tether_plan::file as plan_file;

/// Starts a new goal run over the plan's active goals and drives it. `on_start` is told the run
/// id before the first iteration.
pub async fn start(
    deps: &Deps,
    spec: GoalSpec,
    interrupt: CancellationToken,
    on_start: impl FnOnce(&RunId),
) -> Result<(RunId, GoalEnd), GoalError> {
    let doc = read_valid(deps, &spec)?;
    if doc.plan().active_goals().next().is_none() {
        return Err(GoalError::NoActiveGoals {
            plan: spec.plan.clone(),
            open: doc
                .plan()
                .goals
                .iter()
                .filter(|g| g.status() == Status::Open)
                .filter_map(|g| g.id().map(str::to_owned))
                .collect(),
        });
    }
    let (run, lock) = looping::open_new(&deps.ws, &deps.journal, RunKind::Goal, &spec)?;
    on_start(&run);
    let end = drive(deps, &run, &spec, interrupt, Vec::new()).await?;
    drop(lock);
    Ok((run, end))
}

/// Resumes a stopped goal run (paused, blocked, interrupted, killed, or out of budget — the
/// budget starts again then) from where the plan and the store say it stands.
pub async fn resume(
    deps: &Deps,
    run: &RunId,
    by: &str,
    interrupt: CancellationToken,
) -> Result<GoalEnd, GoalError> {
    let (lock, spec): (_, GoalSpec) =
        looping::reopen(&deps.ws, &deps.journal, run, RunKind::Goal, by)?;
    let Some(answers) =
        looping::await_interrupted(&deps.human, &deps.journal, run, &interrupt).await?
    else {
        looping::finish(&deps.journal, &deps.human, run, Outcome::Interrupted).await?;
        return Ok(GoalEnd::Interrupted);
    };
    let mut owed = owed_before_stop(deps, run, &spec)?;
    if !answers.is_empty() {
        owed.push(Feedback::Answers(answers));
    }
    let end = drive(deps, run, &spec, interrupt, owed).await?;
    drop(lock);
    Ok(end)
}

/// What the run's last iteration left owed to the next prompt when the process stopped (the
/// budget ran out, a pause, a kill): its rejected sign-offs and what it said it did.
fn owed_before_stop(deps: &Deps, run: &RunId, spec: &GoalSpec) -> Result<Vec<Feedback>, GoalError> {
    let store = deps.journal.store();
    let events = store.events(run, tether_store::Seq(0), usize::MAX)?;
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
        .map(attempt)
        .filter(|a| !a.accepted)
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

fn read_valid(deps: &Deps, spec: &GoalSpec) -> Result<PlanDoc, GoalError> {
    let doc = plan_file::read(&deps.plan_path(spec))?;
    doc.check()
        .map_err(|e| GoalError::PlanInvalid(e.to_string()))?;
    Ok(doc)
}

/// The loop's memory within one process.
struct Cycle<'a> {
    deps: &'a Deps,
    run: &'a RunId,
    spec: &'a GoalSpec,
    /// Goals seen active during this run: the ones it must finish.
    goals: BTreeSet<String>,
    /// The newest verdict already looked at.
    last_verdict: i64,
    signed_off: Vec<String>,
}

async fn drive(
    deps: &Deps,
    run: &RunId,
    spec: &GoalSpec,
    interrupt: CancellationToken,
    mut owed: Vec<Feedback>,
) -> Result<GoalEnd, GoalError> {
    let mut cycle = Cycle {
        deps,
        run,
        spec,
        goals: BTreeSet::new(),
        last_verdict: deps.journal.store().last_verdict_id()?,
        signed_off: Vec::new(),
    };
    let mut rules = Rules::new(spec.rules);
    let plan_path = deps.plan_path(spec);
    let dir = deps.ws.runs_dir().join(run.to_string());
    loop {
        let state = deps.journal.state(run)?;
        if state.cancel_requested.is_some() {
            looping::finish(&deps.journal, &deps.human, run, Outcome::Cancelled).await?;
            return Ok(GoalEnd::Cancelled);
        }
        if let Some(by) = &state.pause_requested {
            let reason = format!("paused by {by}");
            deps.journal.append(
                run,
                &Event::Paused {
                    reason: reason.clone(),
                },
            )?;
            return Ok(GoalEnd::Paused { reason });
        }
        if interrupt.is_cancelled() {
            looping::finish(&deps.journal, &deps.human, run, Outcome::Interrupted).await?;
            return Ok(GoalEnd::Interrupted);
        }
        let doc = cycle.reconcile(&mut owed)?;
        if doc.plan().active_goals().next().is_none() {
            looping::finish(&deps.journal, &deps.human, run, Outcome::Completed).await?;
            return Ok(GoalEnd::AllDone {
                iteration: state.iteration,
                signed_off: cycle.signed_off,
            });
        }
        let n = state.iteration + 1;
        if let Some(max) = spec.max_iterations
            && state.budget_used() >= max
        {
            looping::finish(&deps.journal, &deps.human, run, Outcome::BudgetExhausted).await?;
            return Ok(GoalEnd::BudgetSpent {
                iteration: state.iteration,
            });
        }
        cycle.goals.extend(
            doc.plan()
                .active_goals()
                .filter_map(|g| g.id().map(str::to_owned)),
        );
        let messages = deps.journal.store().deliver_messages(run, n)?;
        let mut feedback: Vec<Feedback> = messages
            .into_iter()
            .map(|m| Feedback::Message {
                by: m.by,
                text: m.text,
            })
            .collect();
        feedback.append(&mut owed);
        let prompt = prompt::iteration(&spec.plan, doc.plan(), spec.threshold, &feedback);

        let files_before = fingerprint(deps.ws.root(), &plan_path);
        let plan_before = text_hash(doc.text());
        deps.journal.append(run, &Event::IterationStarted { n })?;
        let turn_cancel = interrupt.child_token();
        let watcher = tokio::spawn(watch_for_cancel(
            deps.journal.clone(),
            run.clone(),
            turn_cancel.clone(),
        ));
        let request = TurnRequest {
            iteration: n,
            prompt,
            transcript: dir.join(format!("iteration-{n:04}.jsonl")),
        };
        let recorder = Recorder::new(&deps.journal, run, n);
        let result = deps
            .executor
            .run_turn(request, &recorder, turn_cancel.clone())
            .await;
        watcher.abort();
        let final_message = match result {
            Ok(outcome) => {
                let summary = summary(&outcome.final_message);
                deps.journal.append(
                    run,
                    &Event::IterationCompleted {
                        n,
                        summary: summary.clone(),
                    },
                )?;
                summary
            }
            Err(ExecError::Cancelled) => {
                if deps.journal.state(run)?.cancel_requested.is_some() {
                    looping::finish(&deps.journal, &deps.human, run, Outcome::Cancelled).await?;
                    return Ok(GoalEnd::Cancelled);
                }
                looping::finish(&deps.journal, &deps.human, run, Outcome::Interrupted).await?;
                return Ok(GoalEnd::Interrupted);
            }
            Err(e) => {
                let error = chain(&e);
                deps.journal.append(
                    run,
                    &Event::IterationFailed {
                        n,
                        error: error.clone(),
                    },
                )?;
                if deps.journal.state(run)?.consecutive_failures >= spec.max_consecutive_failures {
                    looping::finish(&deps.journal, &deps.human, run, Outcome::Failed).await?;
                    return Ok(GoalEnd::Failed {
                        iteration: n,
                        error,
                    });
                }
                continue;
            }
        };

        let attempts = cycle.attempts()?;
        let after = plan_file::read(&plan_path)?;
        let observation = Observation {
            tool_calls: recorder.tool_calls(),
            files_changed: fingerprint(deps.ws.root(), &plan_path) != files_before,
            plan_changed: text_hash(after.text()) != plan_before,
            attempts: &attempts,
            plan: after.plan(),
        };
        let decision = rules.after_iteration(&observation);
        for (rule, reason) in &decision.fired {
            deps.journal.append(
                run,
                &Event::RuleFired {
                    rule: (*rule).to_owned(),
                    reason: reason.clone(),
                },
            )?;
        }
        owed = decision.feedback;
        if !final_message.is_empty() {
            owed.push(Feedback::Continuation {
                n,
                summary: final_message,
            });
        }
        match decision.stop {
            Some(Stop::Blocked { rule, reason }) => {
                looping::finish(&deps.journal, &deps.human, run, Outcome::Blocked).await?;
                return Ok(GoalEnd::Blocked {
                    rule: rule.to_owned(),
                    reason,
                });
            }
            Some(Stop::Paused { rule, reason }) => {
                deps.journal.append(
                    run,
                    &Event::Paused {
                        reason: reason.clone(),
                    },
                )?;
                if rule == "judge_unavailable" {
                    tell_human_the_judge_is_down(deps, run, &reason)?;
                }
                return Ok(GoalEnd::Paused { reason });
            }
            None => {}
        }
    }
}

impl Cycle<'_> {
    fn plan_path(&self) -> std::path::PathBuf {
        self.deps.plan_path(self.spec)
    }

    /// Reads the plan and puts it right where the store knows better: a goal of this run marked
    /// `done` with no sign-off goes back to `active`; a goal whose sign-off was recorded but
    /// whose `status: done` never got written (a crash in between) is marked done.
    fn reconcile(&mut self, owed: &mut Vec<Feedback>) -> Result<PlanDoc, GoalError> {
        let path = self.plan_path();
        let doc = plan_file::read(&path)?;
        if let Err(e) = doc.check() {
            return Err(GoalError::PlanInvalid(e.to_string()));
        }
        let mut reopen = Vec::new();
        let mut finish = Vec::new();
        for goal in &doc.plan().goals {
            let Some(id) = goal.id() else { continue };
            let accepted = self.accepted(id, &goal.contract_hash())?;
            match goal.status() {
                Status::Done if self.goals.contains(id) && !accepted => reopen.push(id.to_owned()),
                Status::Active if accepted => finish.push(id.to_owned()),
                _ => {}
            }
        }
        if reopen.is_empty() && finish.is_empty() {
            return Ok(doc);
        }
        for id in &reopen {
            self.deps.journal.append(
                self.run,
                &Event::RuleFired {
                    rule: "unsigned_done".to_owned(),
                    reason: format!(
                        "`{id}` was marked done without a sign-off; set back to active"
                    ),
                },
            )?;
            owed.push(Feedback::UnsignedDone { goal: id.clone() });
        }
        for id in &reopen {
            plan_file::patch(&path, |doc| doc.set_status(id, Status::Active))?;
        }
        for id in &finish {
            plan_file::patch(&path, |doc| doc.set_status(id, Status::Done))?;
        }
        let doc = plan_file::read(&path)?;
        Ok(doc)
    }

    /// Whether the goal was accepted against the contract it has now.
    fn accepted(&self, id: &str, contract: &str) -> Result<bool, GoalError> {
        let verdicts = self
            .deps
            .journal
            .store()
            .verdicts_for_goal(&self.spec.plan, id)?;
        Ok(verdicts.iter().any(|v| {
            v.decision.verdict == Verdict::Accept
                && v.decision
                    .contract_hash
                    .as_deref()
                    .is_none_or(|h| h == contract)
        }))
    }

    /// The sign-off attempts recorded since the last look.
    fn attempts(&mut self) -> Result<Vec<Attempt>, GoalError> {
        let records = self
            .deps
            .journal
            .store()
            .verdicts_after(&self.spec.plan, self.last_verdict)?;
        if let Some(last) = records.last() {
            self.last_verdict = last.id;
        }
        for r in &records {
            if r.decision.verdict == Verdict::Accept {
                self.signed_off.push(r.decision.goal_id.clone());
            }
        }
        Ok(records.iter().map(attempt).collect())
    }
}

/// A recorded verdict as the rules see it.
pub(super) fn attempt(record: &VerdictRecord) -> Attempt {
    let d = &record.decision;
    // A reject with no judge model is verify's: the judge is only asked once verify passed.
    let verify_failed = d.verdict == Verdict::Reject && d.judge_model.is_none();
    Attempt {
        goal: d.goal_id.clone(),
        accepted: d.verdict == Verdict::Accept,
        judge_unavailable: d.reason.starts_with(tether_signoff::JUDGE_UNAVAILABLE),
        failed_verify: verify_failed.then(|| text_hash(&d.reason)),
        reason: d.reason.clone(),
        missing: d.missing.clone(),
    }
}

/// Leaves a question for the human (in `tether questions`, the dashboard) saying the run paused
/// because the judge keeps failing. It is not tied to the run, so the run reads as paused, not
/// waiting; answering it only acknowledges it.
fn tell_human_the_judge_is_down(deps: &Deps, run: &RunId, reason: &str) -> Result<(), GoalError> {
    let question = deps
        .journal
        .store()
        .insert_question(&tether_store::NewQuestion {
            run_id: None,
            thread_id: None,
            question: format!(
                "Run {run} paused: {reason}. Goals cannot be signed off until the judge answers. \
             Check [judge] in tether.toml (endpoint, model, key, timeout_secs), then continue \
             with `tether resume {run}`. (Answer this to acknowledge it.)"
            ),
            context: String::new(),
            confidence: None,
        })?;
    tracing::warn!(question = %question.id, "the judge is unavailable; the run paused");
    Ok(())
}
