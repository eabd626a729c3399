//! The steps of one sign-off attempt (`complete.rs` runs them in order): the goal checkable at
//! all, verify, the judge and its verdict.

use tether_plan::Goal;
use tokio_util::sync::CancellationToken;

use super::record::Decision;
use super::verdict;
use super::{Signoff, SignoffError, SignoffOutcome, verify};
use crate::prompts::{JudgeBrief, request};
use crate::unchanged;

impl Signoff {
    /// The goal, when this attempt may check it: its contract approved, the workspace changed
    /// since its last reject (`tree` told the fingerprint), something to check it with; else the
    /// refusal.
    pub(super) fn checkable(
        &self,
        goal_id: &str,
        tree: &mut Option<String>,
    ) -> Result<Result<Goal, SignoffOutcome>, SignoffError> {
        let goal = match self.approved_goal(goal_id)? {
            Ok(goal) => goal,
            Err(reason) => return Ok(Err(super::complete::refused(goal_id, reason))),
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
            return Ok(Err(super::complete::refused(
                goal_id,
                format!(
                    "nothing changed since attempt {attempt}, which was rejected: the workspace \
                     and the contract are as they were then, so it is not checked again. Change \
                     the work (the plan's log says what was missing) before asking again"
                ),
            )));
        }
        if goal.verify.is_none() && self.judge.is_none() {
            return Ok(Err(super::complete::refused(
                goal_id,
                format!(
                    "nothing to check: goal `{goal_id}` has no verify command and no judge is \
                     used (--no-judge); add a `verify:` line (and have the contract approved \
                     again) or configure a [judge]"
                ),
            )));
        }
        Ok(Ok(goal))
    }

    /// Runs the goal's verify command, when it has one, into `decision`: the decision to go on
    /// with, or the attempt's end (recorded) when verify fails.
    pub(super) async fn verify_step(
        &self,
        goal: &Goal,
        mut decision: Decision,
        cancel: &CancellationToken,
    ) -> Result<Result<Decision, SignoffOutcome>, SignoffError> {
        let Some(command) = goal.verify.as_ref().map(|l| l.value.as_str()) else {
            return Ok(Ok(decision));
        };
        let (goal_id, attempt) = (decision.goal_id().to_owned(), decision.attempt());
        let log = self
            .files_dir()
            .join(format!("verify-{goal_id}-{attempt}.log"));
        let shown = self.ws.display(&log).into_owned();
        let sandbox = if goal.network() {
            self.sandbox_network
                .clone()
                .or_else(|| self.sandbox.clone())
        } else {
            self.sandbox.clone()
        };
        let result = verify::run(
            command,
            self.ws.root(),
            self.verify_timeout,
            &log,
            shown,
            verify::Confinement {
                env_remove: &self.env_remove,
                sandbox,
            },
            cancel,
        )
        .await?;
        let passed = result.passed();
        let ending = result.ending();
        // The output's hash is part of the reason, so the goal loop can tell the same failure
        // repeating from a new one; where the whole output is goes to `missing`, so the next
        // prompt points at it.
        let hash: String = result
            .output_hash
            .trim_start_matches("sha256:")
            .chars()
            .take(12)
            .collect();
        let log_shown = result.log_path.clone();
        decision.verify = Some(result);
        if passed {
            return Ok(Ok(decision));
        }
        self.record(decision.verify_failed(
            format!("verify failed: `{command}` {ending} (output {hash})"),
            vec![format!(
                "the verify command `{command}` must pass (it {ending}; its output is in \
                 {log_shown})"
            )],
        ))
        .map(Err)
    }

    /// The judge reads the repository and rules on the agent's `evidence` and `paths`; its
    /// verdict recorded (an accept only when its quotes back it).
    pub(super) async fn judge_step(
        &self,
        judge: &crate::judge::Judge,
        goal: &Goal,
        (evidence, paths): (&str, &[String]),
        mut decision: Decision,
        cancel: &CancellationToken,
    ) -> Result<SignoffOutcome, SignoffError> {
        let (goal_id, attempt) = (decision.goal_id().to_owned(), decision.attempt());
        decision.judge_model = Some(judge.model_name().to_owned());
        let transcript = self
            .files_dir()
            .join(format!("judge-{goal_id}-{attempt}.jsonl"));
        decision.transcript = Some(self.ws.display(&transcript).into_owned());
        // What the work changed, once for this attempt: the judge's brief and the quote check.
        let work = self.work_tree(cancel).await;
        let verify_command = goal.verify.as_ref().map(|l| l.value.as_str());
        decision.surface = crate::surface::of(verify_command, &work.changed);
        let brief = JudgeBrief {
            goal_id: &goal_id,
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
            surface: &decision.surface,
        };
        let mut used = crate::judge::SessionUsage::default();
        let session = judge
            .session(
                self.ws.root(),
                request(&brief),
                &transcript,
                cancel,
                &mut used,
            )
            .await;
        self.record_judge_usage(&goal_id, &used)?;
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
            verdict::Decision::Impossible | verdict::Decision::Blocked => {
                let (kind, word) = match verdict.decision {
                    verdict::Decision::Impossible => {
                        (tether_store::VerdictKind::JudgeImpossible, "impossible")
                    }
                    _ => (tether_store::VerdictKind::JudgeBlocked, "blocked"),
                };
                let why = verdict
                    .summary
                    .unwrap_or_else(|| "the judge gave no reason".to_owned());
                let reason = format!("the judge ruled the goal {word}: {why}");
                self.record(decision.ruled_out(kind, reason))
            }
        }
    }
}
