//! `complete_goal`: the contract check, then verify, then the judge, then the record.

use tether_plan::{Goal, Status};
use tether_store::{Reservation, RunningSignoff};
use tether_tools::process::ProcessId;
use tokio_util::sync::CancellationToken;

use super::record::Decision;
use super::{Signoff, SignoffError, SignoffOutcome};
use crate::unchanged;
use tether_plan::file as plan_file;

/// The reason recorded for a sign-off by verify alone.
pub const NO_JUDGE_REASON: &str = "verify passed; signed off without a judge (--no-judge)";

impl Signoff {
    /// Tries to sign the goal `goal_id` off, with the agent's (or person's) `evidence` and the
    /// `paths` that show it. Refusals, rejects and an unavailable judge are outcomes; `Err` is
    /// for a failing store or file system and for `cancel` firing mid-way (nothing recorded).
    ///
    /// A goal rejected on this very workspace (and contract) is refused at once, without verify
    /// or a model call (see `unchanged.rs`).
    pub async fn complete(
        &self,
        goal_id: &str,
        evidence: &str,
        paths: &[String],
        cancel: &CancellationToken,
    ) -> Result<SignoffOutcome, SignoffError> {
        let mut tree = None;
        let outcome = self
            .complete_in_full(goal_id, evidence, paths, cancel, &mut tree)
            .await?;
        let state_dir = self.ws.state_dir();
        match (&outcome, tree) {
            // A judge that failed judged nothing: the same tree may be asked about again.
            (SignoffOutcome::Rejected { attempt, .. }, Some(tree))
                if !outcome.judge_unavailable() =>
            {
                unchanged::remember_reject(&state_dir, goal_id, *attempt, &tree);
            }
            (SignoffOutcome::Accepted { .. }, _) => unchanged::forget(&state_dir, goal_id),
            _ => {}
        }
        Ok(outcome)
    }

    /// [`Signoff::complete`], telling `tree` the workspace's fingerprint as it was checked: the
    /// steps in order, each able to end the attempt — the goal checkable, the attempt reserved,
    /// verify, then the judge.
    async fn complete_in_full(
        &self,
        goal_id: &str,
        evidence: &str,
        paths: &[String],
        cancel: &CancellationToken,
        tree: &mut Option<String>,
    ) -> Result<SignoffOutcome, SignoffError> {
        let goal = match self.checkable(goal_id, tree)? {
            Ok(goal) => goal,
            Err(refusal) => return Ok(refusal),
        };
        let held = match self.reserve(goal_id)? {
            Ok(held) => held,
            Err(running) => return Ok(refused(goal_id, busy_reason(goal_id, &running))),
        };
        let decision = Decision::new(goal_id, held.attempt, goal.contract_hash());
        let decision = match self.verify_step(&goal, decision, cancel).await? {
            Ok(decision) => decision,
            Err(failed) => return Ok(failed),
        };
        let Some(judge) = &self.judge else {
            return self.record(decision.accept(NO_JUDGE_REASON.to_owned(), Vec::new()));
        };
        self.judge_step(judge, &goal, (evidence, paths), decision, cancel)
            .await
    }

    /// Records what the judge's calls used, charged to the goal (and to the run, in one).
    pub(super) fn record_judge_usage(
        &self,
        goal_id: &str,
        used: &crate::judge::SessionUsage,
    ) -> Result<(), SignoffError> {
        if used.calls == 0 {
            return Ok(());
        }
        let event = tether_store::Event::JudgeUsage {
            judge: tether_store::JudgeRole::SignOff,
            goal_id: Some(goal_id.to_owned()),
            calls: used.calls,
            input_tokens: used.usage.input_tokens,
            cached_input_tokens: used.usage.cached_input_tokens,
            cache_write_input_tokens: used.usage.cache_write_input_tokens,
            output_tokens: used.usage.output_tokens,
            cost_usd: used.cost_usd,
        };
        match &self.run {
            Some(run) => {
                self.journal.append(run, &event)?;
            }
            None => {
                self.journal.store().append(None, &event)?;
            }
        }
        Ok(())
    }

    /// The goal, if it may be signed off: the plan parses, the goal exists and is open or
    /// active, it has a `done_when`, and its contract is the approved one. `Ok(Err(reason))`
    /// when not.
    pub(super) fn approved_goal(
        &self,
        goal_id: &str,
    ) -> Result<Result<Goal, String>, SignoffError> {
        let goal = match self.open_goal(goal_id) {
            Ok(goal) => goal,
            Err(reason) => return Ok(Err(reason)),
        };
        if goal.done_when.is_none() {
            return Ok(Err(format!(
                "goal `{goal_id}` has no `done_when:`, so there is nothing to sign it off \
                 against; add one and have the contract approved (`tether plan approve \
                 {goal_id}`)"
            )));
        }
        let approval = self.journal.store().approval(&self.plan_key(), goal_id)?;
        let hash = goal.contract_hash();
        Ok(match approval {
            None => Err(format!(
                "the contract of goal `{goal_id}` has not been approved by a human; approve it \
                 with `tether plan approve {goal_id}`"
            )),
            Some(a) if a.contract_hash != hash => Err(format!(
                "the contract of goal `{goal_id}` (done_when, verify, failure_modes, ask_before, \
                 budget, network) changed since {} approved it; a human must review it and run \
                 `tether plan approve {goal_id}`",
                a.approved_by
            )),
            Some(_) => Ok(goal),
        })
    }

    /// The goal, if the plan parses and the goal is open or active; else why not.
    pub(super) fn open_goal(&self, goal_id: &str) -> Result<Goal, String> {
        let doc = plan_file::read(&self.plan).map_err(|e| e.to_string())?;
        doc.check()
            .map_err(|e| format!("the plan cannot be used until it is fixed: {e}"))?;
        let plan = doc.plan();
        let Some(goal) = plan.goal(goal_id) else {
            let known: Vec<&str> = plan.goals.iter().filter_map(Goal::id).collect();
            return Err(format!(
                "no goal with id `{goal_id}` in {}; {}",
                self.plan_key(),
                if known.is_empty() {
                    "it has no goals with ids".to_owned()
                } else {
                    format!("known ids: {}", known.join(", "))
                }
            ));
        };
        match goal.status() {
            Status::Open | Status::Active => Ok(goal.clone()),
            Status::Done => Err(format!("goal `{goal_id}` is already done")),
            Status::Cancelled => Err(format!(
                "goal `{goal_id}` is cancelled; set it back to `status: active` first if it is \
                 wanted again"
            )),
        }
    }
}

/// A reserved attempt, released (once its verdict is recorded, or it gave up) on drop.
struct Held<'a> {
    signoff: &'a Signoff,
    goal_id: String,
    holder: String,
    attempt: u32,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let released = self.signoff.journal.store().release_signoff(
            &self.signoff.plan_key(),
            &self.goal_id,
            &self.holder,
        );
        if let Err(e) = released {
            tracing::warn!(goal = %self.goal_id, "a sign-off reservation was not released: {e}");
        }
    }
}

impl Signoff {
    /// Reserves the goal's next attempt for this process; `Err` names the sign-off of the goal
    /// already running (one whose process died is taken over).
    fn reserve(&self, goal_id: &str) -> Result<Result<Held<'_>, RunningSignoff>, SignoffError> {
        let holder = ProcessId::current().to_string();
        let gone = |h: &str| h.parse::<ProcessId>().map_or(true, |p| !p.is_alive());
        let reserved =
            self.journal
                .store()
                .reserve_signoff(&self.plan_key(), goal_id, &holder, &gone)?;
        Ok(match reserved {
            Reservation::Reserved { attempt } => Ok(Held {
                signoff: self,
                goal_id: goal_id.to_owned(),
                holder,
                attempt,
            }),
            Reservation::Busy(running) => Err(running),
        })
    }
}

/// Why a sign-off was refused because another of the goal is running.
fn busy_reason(goal_id: &str, running: &RunningSignoff) -> String {
    format!(
        "a sign-off of `{goal_id}` is already running (attempt {}); wait for its verdict, and \
         try again only if it is rejected",
        running.attempt
    )
}

pub(super) fn refused(goal_id: &str, reason: String) -> SignoffOutcome {
    SignoffOutcome::Refused {
        goal_id: goal_id.to_owned(),
        reason,
    }
}
