//! The reconcile step: before each iteration the plan is put right where the store knows
//! better, since a goal of the run leaves it only by a recorded sign-off or a person's cancel.
//!
//! The goals outside a scoped run's scope are left as they are. For each goal the run works on
//! (seen active during the run):
//!
//! | the plan says | and the store | then |
//! | --- | --- | --- |
//! | `done` | no accept that counts | back to `active` (`unsigned_done`, or `unjudged_accept` for an accept without the judge in a run that has one) |
//! | `open` | — | back to `active` (`status_reverted`) |
//! | `cancelled` | a person cancelled it | it leaves the run |
//! | `cancelled` | the agent cancelled it (`cancel_goal`) | the run pauses for a person (`cancel_unconfirmed`) |
//! | `cancelled` | nobody recorded a cancel | back to `active` (`status_reverted`) |
//! | (gone) | — | the run pauses for a person (`goal_removed`) |
//!
//! And any goal still `active` whose accept is recorded is marked `done` (a crash between the
//! record and the patch). Each rule fired is recorded as a `rule_fired` event; the new rules also
//! leave a line in the plan's log, and the reverts owe the next prompt an explanation.

use tether_plan::{PlanDoc, Status};
use tether_store::{Event, Rule, Verdict};

use super::LoopError;
use super::cycle::GoalLoop;
use crate::looping::At;
use crate::prompts::Feedback;
use tether_plan::file as plan_file;

/// The plan after the reconcile step, and why the run must pause for a person, if it must.
pub(super) struct Reconciled {
    pub(super) doc: PlanDoc,
    pub(super) pause: Option<String>,
}

/// What the store says of a goal's sign-off against its current contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signed {
    /// Accepted, in a way that counts for this run.
    Yes,
    /// Accepted only without the judge, in a run that has one.
    Unjudged,
    /// Never accepted.
    No,
}

/// One thing the step does to a goal.
enum Fix {
    /// Back to `active`, with the rule, its reason and what the next prompt owes.
    Reopen(Rule, String, Feedback),
    /// `active` → `done`: its accept is recorded.
    Finish,
    /// The run pauses for a person.
    Pause(Rule, String),
    /// A person cancelled it: it leaves the run.
    Release,
}

impl GoalLoop {
    /// Reads the plan and puts it right where the store knows better (see the module docs).
    pub(super) fn reconcile(&mut self, at: At<'_>) -> Result<Reconciled, LoopError> {
        let doc = plan_file::read(&self.plan_path)?;
        if let Err(e) = doc.check() {
            return Err(LoopError::PlanInvalid(e.to_string()));
        }
        let fixes = self.fixes(at, &doc)?;
        if fixes.is_empty() {
            return Ok(Reconciled { doc, pause: None });
        }
        let mut pauses = Vec::new();
        for (id, fix) in fixes {
            match fix {
                Fix::Reopen(rule, reason, feedback) => {
                    self.fired(at, rule, &reason)?;
                    if rule != Rule::UnsignedDone {
                        self.log(&reason)?;
                    }
                    self.owed.push(feedback);
                    plan_file::patch(&self.plan_path, |doc| doc.set_status(&id, Status::Active))?;
                }
                Fix::Finish => {
                    plan_file::patch(&self.plan_path, |doc| doc.set_status(&id, Status::Done))?;
                }
                Fix::Pause(rule, reason) => {
                    self.fired(at, rule, &reason)?;
                    self.log(&reason)?;
                    self.goals.remove(&id);
                    pauses.push(reason);
                }
                Fix::Release => {
                    self.goals.remove(&id);
                }
            }
        }
        let pause = (!pauses.is_empty()).then(|| pauses.join("; "));
        Ok(Reconciled {
            doc: plan_file::read(&self.plan_path)?,
            pause,
        })
    }

    /// What to do to each goal the run works on, in plan order, then the goals of the run
    /// that are gone.
    fn fixes(&self, at: At<'_>, doc: &PlanDoc) -> Result<Vec<(String, Fix)>, LoopError> {
        let run = at.run;
        let mut fixes = Vec::new();
        for goal in &self.spec.narrow(doc.plan()).goals {
            let Some(id) = goal.id() else { continue };
            let ours = self.goals.contains(id);
            let signed = self.signed(at, id, &goal.contract_hash())?;
            let fix = match goal.status() {
                Status::Done if ours && signed == Signed::Unjudged => Some(Fix::Reopen(
                    Rule::UnjudgedAccept,
                    format!(
                        "`{id}` was signed off without the judge, which does not count in a run \
                         with a judge; set back to active"
                    ),
                    Feedback::UnjudgedAccept {
                        goal: id.to_owned(),
                    },
                )),
                Status::Done if ours && signed == Signed::No => Some(Fix::Reopen(
                    Rule::UnsignedDone,
                    format!("`{id}` was marked done without a sign-off; set back to active"),
                    Feedback::UnsignedDone {
                        goal: id.to_owned(),
                    },
                )),
                Status::Active if signed == Signed::Yes => Some(Fix::Finish),
                Status::Open if ours => Some(reverted(id, Status::Open)),
                Status::Cancelled if ours => Some(self.cancelled(at, id, run)?),
                _ => None,
            };
            fixes.extend(fix.map(|f| (id.to_owned(), f)));
        }
        for id in &self.goals {
            if doc.plan().goal(id).is_none() {
                let reason = format!(
                    "goal `{id}` was removed from the plan during run {run}, without a sign-off \
                     or a person's cancel; put it back, or resume the run to go on without it \
                     (`tether resume {run}`)"
                );
                fixes.push((id.clone(), Fix::Pause(Rule::GoalRemoved, reason)));
            }
        }
        Ok(fixes)
    }

    /// A goal of the run that is `cancelled`: whose cancel it was.
    fn cancelled(&self, at: At<'_>, id: &str, run: &tether_store::RunId) -> Result<Fix, LoopError> {
        let latest = at
            .deps
            .journal
            .store()
            .latest_cancellation(&self.spec.plan, id)?
            .filter(|c| c.id > self.last_cancellation);
        Ok(match latest {
            Some(c) if c.cancel.by_person => Fix::Release,
            Some(c) => Fix::Pause(
                Rule::CancelUnconfirmed,
                format!(
                    "the agent cancelled goal `{id}` ({}); a person must confirm it with `tether \
                     goal cancel {id} --reason \"…\"`, or set it back to `status: active`, then \
                     `tether resume {run}`",
                    c.cancel.reason
                ),
            ),
            None => reverted(id, Status::Cancelled),
        })
    }

    /// Whether the goal's accept against the contract it has now counts for this run: one
    /// without the judge counts only in a run started with `--no-judge`.
    fn signed(&self, at: At<'_>, id: &str, contract: &str) -> Result<Signed, LoopError> {
        let verdicts = at
            .deps
            .journal
            .store()
            .verdicts_for_goal(&self.spec.plan, id)?;
        // A run settling a merge counts its own sign-offs alone.
        let settling = self.spec.settling.is_some();
        let accepts = verdicts.iter().map(|v| &v.decision).filter(|d| {
            d.verdict == Verdict::Accept
                && d.contract_hash.as_deref().is_none_or(|h| h == contract)
                && (!settling || d.run_id.as_ref() == Some(at.run))
        });
        let mut signed = Signed::No;
        for d in accepts {
            if d.judge_model.is_some() || self.spec.no_judge {
                return Ok(Signed::Yes);
            }
            signed = Signed::Unjudged;
        }
        Ok(signed)
    }

    fn fired(&self, at: At<'_>, rule: Rule, reason: &str) -> Result<(), LoopError> {
        at.deps.journal.append(
            at.run,
            &Event::RuleFired {
                rule,
                reason: reason.to_owned(),
            },
        )?;
        Ok(())
    }

    /// Appends `text` to the plan's log, stamped.
    fn log(&self, text: &str) -> Result<(), LoopError> {
        let line = format!("{} {text}", tether_signoff::stamp(tether_store::now_ms()));
        plan_file::patch(&self.plan_path, |doc| doc.append_log(&line))?;
        Ok(())
    }
}

/// A goal of the run given `status` without a person: back to active.
fn reverted(id: &str, status: Status) -> Fix {
    Fix::Reopen(
        Rule::StatusReverted,
        format!(
            "`{id}` was set to `{status}` without a sign-off or a person's cancel; set back to \
             active"
        ),
        Feedback::StatusReverted {
            goal: id.to_owned(),
            status: status.as_str().to_owned(),
        },
    )
}
