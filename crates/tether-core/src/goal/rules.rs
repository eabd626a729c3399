//! The goal loop's rules, decided after each iteration from what it did: the spin guard, the
//! oscillation nudge, the upkeep reminder, the clean-end reminders, the pause after the judge
//! failed several times in a row, and the circuit breaker — a goal rejected (or re-asked on an
//! unchanged workspace) several times in a row is not retried blindly: a person is asked.
//!
//! This is a pure state machine (observations in, feedback and a possible stop out) so every
//! rule can be tested without running an agent; the loop records each fired rule as an event.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tether_plan::Plan;
use tether_store::{Rule, VerdictKind};

use crate::prompts::Feedback;

/// The rules' settings (`[loop]` in tether.toml), stored with the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSettings {
    /// Iterations in a row with no tool call and no file change that block the run.
    pub spin_guard: u32,
    /// Identical failing verify outputs in a row that trigger the oscillation nudge.
    pub oscillation_repeats: u32,
    /// Iterations in a row that changed files but not the plan before the upkeep reminder.
    pub reminder_after: u32,
    /// Clean-end reminders for a goal before the run pauses for the human.
    pub clean_end_reminders: u32,
    /// Judge failures ("judge unavailable") in a row that pause the run.
    pub judge_failures: u32,
    /// Whether the agent may ask a human (threshold above 0): the nudge suggests asking.
    pub asking_allowed: bool,
    /// Rejections of one goal in a row after which a person is asked how to go on (0: never).
    #[serde(default = "default_escalate_after_rejects")]
    pub escalate_after_rejects: u32,
}

fn default_escalate_after_rejects() -> u32 {
    RuleSettings::DEFAULT.escalate_after_rejects
}

impl RuleSettings {
    /// The defaults of `[loop]` (and three judge failures), asking allowed.
    pub const DEFAULT: RuleSettings = RuleSettings {
        spin_guard: 2,
        oscillation_repeats: 3,
        reminder_after: 3,
        clean_end_reminders: 2,
        judge_failures: 3,
        asking_allowed: true,
        escalate_after_rejects: 3,
    };

    /// These settings without the circuit breaker (`escalate_after_rejects = 0`).
    pub const fn without_breaker(self) -> Self {
        RuleSettings {
            escalate_after_rejects: 0,
            ..self
        }
    }
}

impl Default for RuleSettings {
    fn default() -> Self {
        RuleSettings::DEFAULT
    }
}

/// One sign-off attempt made during the iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The goal.
    pub goal: String,
    /// What kind of decision it got (accepted, verify failed, judge rejected or unavailable).
    pub kind: VerdictKind,
    /// A hash of the failing verify output, when verify failed.
    pub failed_verify: Option<u64>,
    /// Why it was rejected.
    pub reason: String,
    /// What the judge found missing.
    pub missing: Vec<String>,
    /// Refused at once because nothing changed since a rejected attempt (no verify, no judge).
    pub unchanged: bool,
}

/// A goal the circuit breaker stops retrying blindly: a person is asked how to go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// The goal.
    pub goal: String,
    /// Rejections in a row.
    pub rejects: u32,
    /// The last rejection's reason.
    pub reason: String,
    /// What the judge found missing, over those rejections, each item once.
    pub missing: Vec<String>,
}

/// What an iteration did.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// Tool calls the agent made.
    pub tool_calls: u32,
    /// Whether any workspace file (other than the plan) changed.
    pub files_changed: bool,
    /// Whether the plan file changed.
    pub plan_changed: bool,
    /// Sign-off attempts, in order.
    pub attempts: &'a [Attempt],
    /// The plan after the iteration.
    pub plan: &'a Plan,
}

/// How a rule stops the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Blocked: the agent is not making progress.
    Blocked {
        /// The rule.
        rule: Rule,
        /// Why.
        reason: String,
    },
    /// Paused for a human.
    Paused {
        /// The rule.
        rule: Rule,
        /// Why.
        reason: String,
    },
}

/// The rules' decision after one iteration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Every rule that fired, with its reason (recorded as `rule_fired` events).
    pub fired: Vec<(Rule, String)>,
    /// What the next prompt owes the agent.
    pub feedback: Vec<Feedback>,
    /// Whether the run stops here.
    pub stop: Option<Stop>,
    /// A goal whose rejections tripped the circuit breaker: a person decides what happens.
    pub escalate: Option<Escalation>,
}

/// The rules' memory between iterations.
#[derive(Debug, Clone)]
pub struct Rules {
    settings: RuleSettings,
    spins: u32,
    edits_without_plan: u32,
    last_failed_verify: Option<u64>,
    verify_repeats: u32,
    judge_failures: u32,
    clean_end: BTreeMap<String, u32>,
    /// Per goal: rejections in a row, and the missing items they named.
    rejects: BTreeMap<String, (u32, Vec<String>)>,
}

impl Rules {
    /// Fresh rules.
    pub fn new(settings: RuleSettings) -> Self {
        Rules {
            settings,
            spins: 0,
            edits_without_plan: 0,
            last_failed_verify: None,
            verify_repeats: 0,
            judge_failures: 0,
            clean_end: BTreeMap::new(),
            rejects: BTreeMap::new(),
        }
    }

    /// Decides after an iteration that completed.
    pub fn after_iteration(&mut self, obs: &Observation<'_>) -> Decision {
        let mut d = Decision::default();
        self.attempts(obs.attempts, &mut d);
        Self::ruled_out(obs.attempts, &mut d);
        self.circuit_breaker(obs.attempts, &mut d);
        self.spin_guard(obs, &mut d);
        self.reminder(obs, &mut d);
        self.clean_end(obs, &mut d);
        d
    }

    fn attempts(&mut self, attempts: &[Attempt], d: &mut Decision) {
        for a in attempts {
            if a.kind != VerdictKind::Accepted {
                d.feedback.push(Feedback::Rejected {
                    goal: a.goal.clone(),
                    reason: a.reason.clone(),
                    missing: a.missing.clone(),
                });
            }
            if a.kind == VerdictKind::JudgeUnavailable {
                self.judge_failures += 1;
            } else if a.failed_verify.is_none() {
                self.judge_failures = 0;
            }
            match a.failed_verify {
                Some(h) if self.last_failed_verify == Some(h) => self.verify_repeats += 1,
                Some(h) => {
                    self.last_failed_verify = Some(h);
                    self.verify_repeats = 1;
                }
                None => {
                    self.last_failed_verify = None;
                    self.verify_repeats = 0;
                }
            }
            let n = self.settings.oscillation_repeats;
            if n > 0 && self.verify_repeats >= n {
                self.verify_repeats = 0;
                d.fired.push((
                    Rule::Oscillation,
                    format!(
                        "the same failing verify output of `{}` {n} times in a row",
                        a.goal
                    ),
                ));
                if self.settings.asking_allowed {
                    d.feedback.push(Feedback::Oscillation);
                }
            }
        }
        let n = self.settings.judge_failures;
        if n > 0 && self.judge_failures >= n {
            self.judge_failures = 0;
            let last = attempts
                .iter()
                .rev()
                .find(|a| a.kind == VerdictKind::JudgeUnavailable)
                .map_or("", |a| a.reason.as_str());
            let reason = format!("the judge failed {n} times in a row (last: {last})");
            d.fired.push((Rule::JudgeUnavailable, reason.clone()));
            d.stop = Some(Stop::Paused {
                rule: Rule::JudgeUnavailable,
                reason,
            });
        }
    }

    /// A goal the judge ruled impossible, or blocked on what only a person can give, is never
    /// tried again by the agent: the run pauses for a person, with the judge's reason.
    fn ruled_out(attempts: &[Attempt], d: &mut Decision) {
        let Some(a) = attempts.iter().find(|a| {
            matches!(
                a.kind,
                VerdictKind::JudgeImpossible | VerdictKind::JudgeBlocked
            )
        }) else {
            return;
        };
        let reason = format!("`{}`: {}", a.goal, a.reason);
        d.fired.push((Rule::JudgeRuledOut, reason.clone()));
        d.stop = Some(Stop::Paused {
            rule: Rule::JudgeRuledOut,
            reason,
        });
    }

    /// Counts each goal's rejections in a row (verify failed, judge rejected, or nothing
    /// changed since a rejection; an accept starts again, a judge that failed judged nothing);
    /// at `escalate_after_rejects` the goal is escalated and its count starts again.
    fn circuit_breaker(&mut self, attempts: &[Attempt], d: &mut Decision) {
        let n = self.settings.escalate_after_rejects;
        for a in attempts {
            match a.kind {
                VerdictKind::Accepted => {
                    self.rejects.remove(&a.goal);
                }
                // Not the agent's to fix by trying again: the run pauses (`ruled_out`).
                VerdictKind::JudgeUnavailable
                | VerdictKind::JudgeImpossible
                | VerdictKind::JudgeBlocked => {}
                VerdictKind::VerifyFailed | VerdictKind::JudgeRejected => {
                    let (count, missing) = self.rejects.entry(a.goal.clone()).or_default();
                    *count += 1;
                    for item in &a.missing {
                        if !missing.contains(item) {
                            missing.push(item.clone());
                        }
                    }
                    if n > 0 && *count >= n && d.escalate.is_none() {
                        d.escalate = Some(Escalation {
                            goal: a.goal.clone(),
                            rejects: *count,
                            reason: a.reason.clone(),
                            missing: std::mem::take(missing),
                        });
                        *count = 0;
                    }
                }
            }
        }
        if let Some(e) = &d.escalate {
            d.fired.push((
                Rule::CircuitBreaker,
                format!("`{}` was rejected {} times in a row", e.goal, e.rejects),
            ));
        }
    }

    fn spin_guard(&mut self, obs: &Observation<'_>, d: &mut Decision) {
        // Re-asking for a sign-off of an unchanged workspace is no progress either.
        let idle = obs.tool_calls == 0 || obs.attempts.iter().any(|a| a.unchanged);
        if d.escalate.is_some() {
            // A person decides now; their answer starts the count again.
            self.spins = 0;
            return;
        }
        if idle && !obs.files_changed && !obs.plan_changed {
            self.spins += 1;
        } else {
            self.spins = 0;
        }
        let n = self.settings.spin_guard;
        if n > 0 && self.spins >= n && d.stop.is_none() && d.escalate.is_none() {
            let reason = format!("{n} iterations in a row with no tool call and no file change");
            d.fired.push((Rule::SpinGuard, reason.clone()));
            d.stop = Some(Stop::Blocked {
                rule: Rule::SpinGuard,
                reason,
            });
        }
    }

    fn reminder(&mut self, obs: &Observation<'_>, d: &mut Decision) {
        if obs.plan_changed {
            self.edits_without_plan = 0;
        } else if obs.files_changed {
            self.edits_without_plan += 1;
        }
        let n = self.settings.reminder_after;
        if n > 0 && self.edits_without_plan >= n {
            self.edits_without_plan = 0;
            d.fired.push((
                Rule::Reminder,
                format!("{n} iterations changed files but not the plan"),
            ));
            d.feedback.push(Feedback::Reminder);
        }
    }

    fn clean_end(&mut self, obs: &Observation<'_>, d: &mut Decision) {
        let ready: Vec<_> = obs
            .plan
            .active_goals()
            .filter(|g| !g.subtasks.is_empty() && g.done_subtasks() == g.subtasks.len())
            .filter_map(|g| {
                Some((
                    g.id()?.to_owned(),
                    g.verify.as_ref().map(|v| v.value.clone()),
                ))
            })
            .collect();
        self.clean_end
            .retain(|id, _| ready.iter().any(|(r, _)| r == id));
        for (goal, verify) in ready {
            let sent = self.clean_end.entry(goal.clone()).or_insert(0);
            if *sent >= self.settings.clean_end_reminders {
                let reason = format!(
                    "every subtask of `{goal}` is ticked but it is still not signed off after \
                     {sent} reminders"
                );
                d.fired.push((Rule::CleanEnd, reason.clone()));
                if d.stop.is_none() {
                    d.stop = Some(Stop::Paused {
                        rule: Rule::CleanEnd,
                        reason,
                    });
                }
                continue;
            }
            *sent += 1;
            d.fired.push((
                Rule::CleanEnd,
                format!(
                    "every subtask of `{goal}` is ticked but it is not signed off (reminder {sent})"
                ),
            ));
            d.feedback.push(Feedback::CleanEnd { goal, verify });
        }
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
