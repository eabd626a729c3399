//! One goal-loop iteration as named steps around the driver's agent turn: **reconcile** the plan
//! with the store, build the **prompt**, (the driver **runs** the turn), **observe** what the
//! turn did, and **decide** with the rules what the next prompt owes and whether the run stops.

use std::collections::BTreeSet;
use std::path::PathBuf;

use tether_config::IterationContext;
use tether_plan::{Plan, PlanDoc};
use tether_store::{Event, NewQuestion, Outcome, Rule, RunId, Seq};

use super::observe::{fingerprint, text_hash};
use super::reconcile::Reconciled;
use super::rules::{Decision, Observation, Rules, Stop};
use super::{Deps, GoalEnd, GoalSpec, LoopError};
use crate::looping::{Answered, At, Focus, HumanCall, Limits, LoopKind, Next, Prompt, Turn, Why};
use crate::prompts::Feedback;
use crate::prompts::goal::{self as prompt, Injected};
use tether_plan::file as plan_file;

/// The goal loop's memory within one process.
pub(super) struct GoalLoop {
    pub(super) spec: GoalSpec,
    pub(super) plan_path: PathBuf,
    rules: Rules,
    /// Goals of the run seen active during it: the ones it must finish.
    pub(super) goals: BTreeSet<String>,
    /// The newest verdict already looked at.
    pub(super) last_verdict: i64,
    /// The newest cancellation recorded before this process took the run up: only later ones
    /// can close a goal of the run.
    pub(super) last_cancellation: i64,
    pub(super) signed_off: Vec<String>,
    /// What the next prompt owes after the messages.
    pub(super) owed: Vec<Feedback>,
    /// The plan as this iteration's reconcile step left it, for its prompt.
    plan: Option<PlanDoc>,
    /// The goals this iteration works on, with their approved budgets.
    focus: Vec<Focus>,
    /// The workspace and plan fingerprints taken just before the turn.
    before: (u64, u64),
    /// The journal's last event before the turn began: what the turn did comes after it.
    pub(super) turn_began: Seq,
}

impl GoalLoop {
    pub(super) fn new(
        deps: &Deps,
        spec: GoalSpec,
        mut owed: Vec<Feedback>,
    ) -> Result<Self, LoopError> {
        if let Some(settling) = &spec.settling {
            for goal in spec.scope.iter().flatten() {
                owed.insert(
                    0,
                    Feedback::Settle {
                        goal: goal.clone(),
                        branch: settling.branch.clone(),
                        paths: settling.paths.clone(),
                    },
                );
            }
        }
        let (last_verdict, last_cancellation) = {
            let store = deps.journal.store();
            (store.last_verdict_id()?, store.last_cancellation_id()?)
        };
        Ok(GoalLoop {
            plan_path: deps.ws.root().join(&spec.plan),
            rules: Rules::new(spec.rules),
            goals: BTreeSet::new(),
            last_verdict,
            last_cancellation,
            signed_off: Vec::new(),
            owed,
            plan: None,
            focus: Vec::new(),
            before: (0, 0),
            turn_began: Seq(0),
            spec,
        })
    }

    /// Observe: what the turn did — its tool calls, whether files and the plan changed, the
    /// sign-off attempts recorded since the last look — as the rules judge it (the plan as they
    /// see it holds the goals of the run alone).
    fn observe(&mut self, at: At<'_>, turn: Turn<'_>) -> Result<Decision, LoopError> {
        let attempts = self.attempts(at)?;
        let after = plan_file::read(&self.plan_path)?;
        let ours = self.spec.narrow(after.plan());
        let (files_before, plan_before) = self.before;
        let observation = Observation {
            tool_calls: turn.tool_calls,
            files_changed: fingerprint(at.deps.ws.root(), &self.plan_path) != files_before,
            plan_changed: text_hash(after.text()) != plan_before,
            attempts: &attempts,
            plan: &ours,
        };
        Ok(self.rules.after_iteration(&observation))
    }

    /// Decide: record each fired rule, owe the next prompt the rules' feedback and what
    /// iteration `n` said it did, and stop when a rule says so.
    fn decide(
        &mut self,
        at: At<'_>,
        n: u32,
        turn: Turn<'_>,
        decision: Decision,
    ) -> Result<Next<GoalEnd>, LoopError> {
        for (rule, reason) in &decision.fired {
            at.deps.journal.append(
                at.run,
                &Event::RuleFired {
                    rule: *rule,
                    reason: reason.clone(),
                },
            )?;
        }
        self.owed = decision.feedback;
        if !turn.summary.is_empty() {
            self.owed.push(Feedback::Continuation {
                n,
                summary: turn.summary.to_owned(),
            });
        }
        Ok(match decision.stop {
            None => match &decision.escalate {
                Some(escalation) => Next::Ask(super::breaker::call(escalation)),
                None => Next::Continue,
            },
            Some(Stop::Blocked { rule, reason }) => {
                Next::Finish(Outcome::Blocked, GoalEnd::Blocked { rule, reason })
            }
            Some(Stop::Paused { rule, reason }) => {
                if rule == Rule::JudgeUnavailable {
                    tell_human_the_judge_is_down(at.deps, at.run, &reason)?;
                }
                if rule == Rule::JudgeRuledOut {
                    tell_human_the_judge_ruled_out(at.deps, at.run, &reason)?;
                }
                Next::Pause(reason.clone(), GoalEnd::paused(reason))
            }
        })
    }
}

impl GoalLoop {
    /// The active goals of `ours` (the plan holding the goals of the run), each with the budget
    /// of its approved contract: a `budget:` line edited since the approval does not count (see
    /// [`crate::planning::terms`]).
    fn focus(&self, at: At<'_>, ours: &Plan) -> Result<Vec<Focus>, LoopError> {
        let store = at.deps.journal.store();
        let mut focus = Vec::new();
        for goal in ours.active_goals() {
            let Some(id) = goal.id() else { continue };
            let terms = crate::planning::terms::in_force(&store, &self.spec.plan, goal)?;
            focus.push(Focus {
                id: id.to_owned(),
                title: goal.title.clone(),
                budget: terms.and_then(|t| t.budget()),
            });
        }
        Ok(focus)
    }
}

impl LoopKind for GoalLoop {
    type End = GoalEnd;

    fn limits(&self) -> Limits {
        Limits {
            max_iterations: self.spec.max_iterations,
            budget: self.spec.budget,
            max_consecutive_failures: self.spec.max_consecutive_failures,
        }
    }

    /// Reconcile: the plan put right where the store knows better; the run is done when no
    /// goal of it is left active.
    fn before(&mut self, at: At<'_>, done: u32) -> Result<Next<GoalEnd>, LoopError> {
        let Reconciled { doc, pause } = self.reconcile(at)?;
        if let Some(reason) = pause {
            return Ok(Next::Pause(reason.clone(), GoalEnd::paused(reason)));
        }
        let ours = self.spec.narrow(doc.plan());
        if ours.active_goals().next().is_none() {
            let end = GoalEnd::AllDone {
                iteration: done,
                signed_off: std::mem::take(&mut self.signed_off),
            };
            return Ok(Next::Finish(Outcome::Completed, end));
        }
        self.focus = self.focus(at, &ours)?;
        self.plan = Some(doc);
        Ok(Next::Continue)
    }

    /// The active goals of the run, in the plan as the reconcile step left it, with their
    /// budgets.
    fn working_on(&self) -> Vec<Focus> {
        self.focus.clone()
    }

    /// Prompt: the framing, the plan injection (the goals of the run alone), then what is owed
    /// (messages first) — and, when the iterations continue the agent's session, the plan and
    /// what is owed alone for a turn that does; the workspace is fingerprinted so the observe
    /// step can tell what the turn changed.
    fn prompt(&mut self, at: At<'_>, _: u32, mut owed: Vec<Feedback>) -> Result<Prompt, LoopError> {
        let doc = match self.plan.take() {
            Some(doc) => doc,
            None => super::run::read_valid(at.deps, &self.spec)?,
        };
        let ours = self.spec.narrow(doc.plan());
        self.goals.extend(
            ours.active_goals()
                .filter_map(|g| g.id().map(str::to_owned)),
        );
        owed.append(&mut self.owed);
        self.turn_began = at.deps.journal.state(at.run)?.last_event_seq;
        let plan = Injected {
            file: &self.spec.plan,
            plan: &ours,
            scoped: self.spec.scope.is_some(),
        };
        let threshold = self.spec.threshold;
        let text = match self.spec.context {
            IterationContext::Fresh => Prompt::fresh(prompt::iteration(plan, threshold, &owed)),
            IterationContext::Continue => Prompt {
                whole: prompt::iteration_continuing(plan, threshold, &owed),
                continued: Some(prompt::continuation(plan, &owed)),
            },
        };
        self.before = (
            fingerprint(at.deps.ws.root(), &self.plan_path),
            text_hash(doc.text()),
        );
        Ok(text)
    }

    /// Observe what the turn did, then decide.
    fn after(&mut self, at: At<'_>, n: u32, turn: Turn<'_>) -> Result<Next<GoalEnd>, LoopError> {
        let decision = self.observe(at, turn)?;
        self.decide(at, n, turn, decision)
    }

    /// The person's answer to the circuit breaker's question.
    fn answered(
        &mut self,
        at: At<'_>,
        call: &HumanCall,
        answer: Answered,
    ) -> Result<Next<GoalEnd>, LoopError> {
        match &call.why {
            Why::CircuitBreaker { goal, rejects } => {
                self.breaker_answered(at, goal, *rejects, answer)
            }
            Why::LoopJudge => Ok(Next::Continue),
        }
    }
}

/// Leaves a question for the human saying the run paused because the judge ruled a goal
/// impossible or blocked (`reason`, the judge's words): only a person can go on from there.
fn tell_human_the_judge_ruled_out(deps: &Deps, run: &RunId, reason: &str) -> Result<(), LoopError> {
    let question = deps.journal.store().insert_question(&NewQuestion {
        run_id: None,
        thread_id: None,
        question: format!(
            "Run {run} paused: {reason}. The agent does not try again. Give what the goal needs \
             and continue with `tether resume {run}`, change its contract (then `tether plan \
             approve`), or cancel it with `tether goal cancel <id> --reason \"…\"`. (Answer \
             this to acknowledge it.)"
        ),
        context: String::new(),
        confidence: None,
        options: Vec::new(),
    })?;
    tracing::warn!(question = %question.id, "the judge ruled a goal out; the run paused");
    Ok(())
}

/// Leaves a question for the human (in `tether questions`, the dashboard) saying the run paused
/// because the judge keeps failing. It is not tied to the run, so the run reads as paused, not
/// waiting; answering it only acknowledges it.
fn tell_human_the_judge_is_down(deps: &Deps, run: &RunId, reason: &str) -> Result<(), LoopError> {
    let question = deps.journal.store().insert_question(&NewQuestion {
        run_id: None,
        thread_id: None,
        question: format!(
            "Run {run} paused: {reason}. Goals cannot be signed off until the judge answers. \
             Check [judge] in tether.toml (endpoint, model, key, timeout_secs), then continue \
             with `tether resume {run}`. (Answer this to acknowledge it.)"
        ),
        context: String::new(),
        confidence: None,
        options: Vec::new(),
    })?;
    tracing::warn!(question = %question.id, "the judge is unavailable; the run paused");
    Ok(())
}
