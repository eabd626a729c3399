//! The steps of one sign-off attempt (`complete.rs` runs them in order): the goal checkable at
//! all, verify, the judge and its verdict.

use tether_plan::Goal;
use tokio_util::sync::CancellationToken;

use tether_store::VerdictKind;

use super::record::Decision;
use super::ruling::Ruling;
use super::verdict;
use super::{Signoff, SignoffError, SignoffOutcome, verify};
use crate::panel::Panel;
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

    /// The judges read the repository and rule on the agent's `evidence` and `paths`, each in
    /// turn until the panel is decided; the decision recorded (an accept only when every
    /// accepting judge's quotes back it).
    pub(super) async fn judge_step(
        &self,
        panel: &Panel,
        goal: &Goal,
        (evidence, paths): (&str, &[String]),
        mut decision: Decision,
        cancel: &CancellationToken,
    ) -> Result<SignoffOutcome, SignoffError> {
        // What the work changed, once for this attempt: the judges' brief and the quote check.
        let work = self.work_tree(cancel).await;
        let verify_command = goal.verify.as_ref().map(|l| l.value.as_str());
        decision.surface = crate::surface::of(verify_command, &work.changed);
        let brief = JudgeBrief {
            goal_id: decision.goal_id(),
            title: &goal.title,
            done_when: goal.done_when.as_ref().map_or("", |l| l.value.as_str()),
            verify_command,
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
        let prompt = request(&brief);
        let mut rulings = Vec::new();
        for (n, judge) in panel.judges().iter().enumerate() {
            let name = match panel.is_panel() {
                false => format!("judge-{}-{}.jsonl", decision.goal_id(), decision.attempt()),
                true => format!(
                    "judge-{}-{}-{}.jsonl",
                    decision.goal_id(),
                    decision.attempt(),
                    n + 1
                ),
            };
            let transcript = self.files_dir().join(name);
            let ruling = self
                .ruling(
                    judge,
                    &prompt,
                    &transcript,
                    &work,
                    decision.goal_id(),
                    cancel,
                )
                .await?;
            rulings.push(ruling);
            let accepts = rulings.iter().filter(|r| r.accepted()).count();
            if panel.decided(accepts, rulings.len() - accepts).is_some() {
                break;
            }
        }
        self.record(Ruling::decide(panel, rulings, decision))
    }

    /// One judge's session over `prompt` and its ruling: its verdict, with its own quotes
    /// checked (an accept they do not back is its reject); what it used charged to the goal.
    async fn ruling(
        &self,
        judge: &crate::judge::Judge,
        prompt: &str,
        transcript: &std::path::Path,
        work: &crate::diff::WorkTree,
        goal_id: &str,
        cancel: &CancellationToken,
    ) -> Result<Ruling, SignoffError> {
        let mut used = crate::judge::SessionUsage::default();
        let session = judge
            .session(
                self.ws.root(),
                prompt.to_owned(),
                transcript,
                cancel,
                &mut used,
            )
            .await;
        self.record_judge_usage(goal_id, &used)?;
        let mut ruling = Ruling {
            model: judge.model_name().to_owned(),
            transcript: self.ws.display(transcript).into_owned(),
            used,
            kind: VerdictKind::JudgeUnavailable,
            reason: String::new(),
            missing: Vec::new(),
            checks: Vec::new(),
        };
        let final_message = match session? {
            Ok(text) => text,
            Err(why) => return Ok(ruling.unavailable(why)),
        };
        let verdict = match verdict::parse(&final_message) {
            Ok(v) => v,
            Err(why) => return Ok(ruling.unavailable(format!("no parsable verdict: {why}"))),
        };
        ruling.checks = verdict.checks;
        ruling.missing = verdict.missing;
        let summary = verdict.summary;
        (ruling.kind, ruling.reason) = match verdict.decision {
            verdict::Decision::Reject => (
                VerdictKind::JudgeRejected,
                summary.unwrap_or_else(|| "the judge rejected the claim".to_owned()),
            ),
            verdict::Decision::Accept => {
                let problems = self.backing(&mut ruling.checks, work.clone());
                if problems.is_empty() {
                    let reason = summary.unwrap_or_else(|| {
                        format!(
                            "the judge accepted, citing {} checked quote(s)",
                            ruling.checks.len()
                        )
                    });
                    (VerdictKind::Accepted, reason)
                } else {
                    let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
                    let reason = format!(
                        "the judge's accept is not backed by its evidence: {}",
                        problems.join("; ")
                    );
                    ruling.missing.extend(problems);
                    (VerdictKind::JudgeRejected, reason)
                }
            }
            verdict::Decision::Impossible | verdict::Decision::Blocked => {
                let (kind, word) = match verdict.decision {
                    verdict::Decision::Impossible => (VerdictKind::JudgeImpossible, "impossible"),
                    _ => (VerdictKind::JudgeBlocked, "blocked"),
                };
                let why = summary.unwrap_or_else(|| "the judge gave no reason".to_owned());
                (kind, format!("the judge ruled the goal {word}: {why}"))
            }
        };
        Ok(ruling)
    }
}
