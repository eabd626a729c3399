//! `complete_goal`: the contract check, then verify, then the judge, then the record.

use tether_plan::{Goal, Status};
use tether_store::{Reservation, RunningSignoff};
use tether_tools::process::ProcessId;
use tokio_util::sync::CancellationToken;

use super::record::Decision;
use super::verdict;
use super::{Signoff, SignoffError, SignoffOutcome, verify};
use crate::prompts::{JudgeBrief, request};
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

    /// [`Signoff::complete`], telling `tree` the workspace's fingerprint as it was checked.
    async fn complete_in_full(
        &self,
        goal_id: &str,
        evidence: &str,
        paths: &[String],
        cancel: &CancellationToken,
        tree: &mut Option<String>,
    ) -> Result<SignoffOutcome, SignoffError> {
        let goal = match self.approved_goal(goal_id)? {
            Ok(goal) => goal,
            Err(reason) => return Ok(refused(goal_id, reason)),
        };
        let plan = self.ws.root().join(&self.plan);
        *tree = unchanged::fingerprint(self.ws.root(), &plan, &goal.contract_hash());
        if let Some(now) = tree.as_deref()
            && let Some(attempt) =
                unchanged::rejected_on_same_tree(&self.ws.state_dir(), goal_id, now)
        {
            if let Some(run) = &self.run {
                let marker = tether_store::Event::NothingChanged {
                    goal_id: goal_id.to_owned(),
                    since_attempt: attempt,
                };
                self.journal.append(run, &marker)?;
            }
            return Ok(refused(
                goal_id,
                format!(
                    "nothing changed since attempt {attempt}, which was rejected: the workspace \
                     and the contract are as they were then, so it is not checked again. Change \
                     the work (the plan's log says what was missing) before asking again"
                ),
            ));
        }
        if goal.verify.is_none() && self.judge.is_none() {
            return Ok(refused(
                goal_id,
                format!(
                    "nothing to check: goal `{goal_id}` has no verify command and no judge is \
                     used (--no-judge); add a `verify:` line (and have the contract approved \
                     again) or configure a [judge]"
                ),
            ));
        }
        let held = match self.reserve(goal_id)? {
            Ok(held) => held,
            Err(running) => return Ok(refused(goal_id, busy_reason(goal_id, &running))),
        };
        let attempt = held.attempt;
        let dir = self.files_dir();
        let root = self.ws.root();
        let mut decision = Decision::new(goal_id, attempt, goal.contract_hash());

        if let Some(command) = goal.verify.as_ref().map(|l| l.value.as_str()) {
            let log = dir.join(format!("verify-{goal_id}-{attempt}.log"));
            let shown = self.ws.display(&log).into_owned();
            let result = verify::run(
                command,
                root,
                self.verify_timeout,
                &log,
                shown,
                verify::Confinement {
                    env_remove: &self.env_remove,
                    sandbox: if goal.network() {
                        self.sandbox_network
                            .clone()
                            .or_else(|| self.sandbox.clone())
                    } else {
                        self.sandbox.clone()
                    },
                },
                cancel,
            )
            .await?;
            let passed = result.passed();
            let ending = result.ending();
            // The output's hash is part of the reason, so the goal loop can tell the same
            // failure repeating from a new one; where the whole output is goes to `missing`, so
            // the next prompt points at it.
            let hash: String = result
                .output_hash
                .trim_start_matches("sha256:")
                .chars()
                .take(12)
                .collect();
            let log_shown = result.log_path.clone();
            decision.verify = Some(result);
            if !passed {
                return self.record(decision.verify_failed(
                    format!("verify failed: `{command}` {ending} (output {hash})"),
                    vec![format!(
                        "the verify command `{command}` must pass (it {ending}; its output is in \
                         {log_shown})"
                    )],
                ));
            }
        }

        let Some(judge) = &self.judge else {
            return self.record(decision.accept(NO_JUDGE_REASON.to_owned(), Vec::new()));
        };
        decision.judge_model = Some(judge.model_name().to_owned());
        let transcript = dir.join(format!("judge-{goal_id}-{attempt}.jsonl"));
        decision.transcript = Some(self.ws.display(&transcript).into_owned());
        // What the work changed, once for this attempt: the judge's brief and the quote check.
        let work = self.work_tree(cancel).await;
        let brief = JudgeBrief {
            goal_id,
            title: &goal.title,
            done_when: goal.done_when.as_ref().map_or("", |l| l.value.as_str()),
            verify_command: goal.verify.as_ref().map(|l| l.value.as_str()),
            failure_modes: goal
                .failure_modes
                .iter()
                .map(|l| l.value.as_str())
                .collect(),
            evidence,
            paths,
            verify: decision.verify.as_ref(),
            diff: &work.summary,
            changed: &work.changed,
        };
        let mut used = crate::judge::SessionUsage::default();
        let session = judge
            .session(root, request(&brief), &transcript, cancel, &mut used)
            .await;
        self.record_judge_usage(goal_id, &used)?;
        let final_message = match session? {
            Ok(text) => text,
            Err(why) => return self.record(decision.unavailable(why)),
        };
        let verdict = match verdict::parse(&final_message) {
            Ok(v) => v,
            Err(why) => {
                return self.record(decision.unavailable(format!("no parsable verdict: {why}")));
            }
        };
        decision.checks = verdict.checks.clone();
        match verdict.decision {
            verdict::Decision::Reject => {
                let reason = verdict
                    .summary
                    .unwrap_or_else(|| "the judge rejected the claim".to_owned());
                self.record(decision.reject(reason, verdict.missing))
            }
            verdict::Decision::Accept => self.accept_if_backed(decision, verdict, work),
        }
    }

    /// Records what the judge's calls used, charged to the goal (and to the run, in one).
    fn record_judge_usage(
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
    fn approved_goal(&self, goal_id: &str) -> Result<Result<Goal, String>, SignoffError> {
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

fn refused(goal_id: &str, reason: String) -> SignoffOutcome {
    SignoffOutcome::Refused {
        goal_id: goal_id.to_owned(),
        reason,
    }
}
