//! Closed vocabularies: the small enums stored as text in events and tables.
//!
//! Each is a Rust enum rather than a string so a typo is a compile error, and each has exactly
//! one spelling, used both in JSON and in SQL columns (snake case). The columns carry no SQL
//! `CHECK` on these spellings: adding a variant later then needs no table rebuild, and the
//! decoding here reports a value it does not know as [`crate::StoreError::Corrupt`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A spelling that is not one of an enum's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a known {what}")]
pub struct UnknownValue {
    /// Which vocabulary was being parsed.
    pub what: &'static str,
    /// The text that did not match.
    pub input: String,
}

macro_rules! vocab {
    (
        $(#[$doc:meta])*
        $name:ident, $what:literal {
            $( $(#[$vdoc:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vdoc])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The one spelling used in JSON and SQL.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue { what: $what, input: s.to_owned() }),
                }
            }
        }
    };
}

vocab!(
    /// Which loop a run is.
    RunKind, "run kind" {
        /// `tether ralph`: the same prompt again and again until the promise or the budget.
        Ralph => "ralph",
        /// `tether run`: work toward the plan's goals until each is signed off.
        Goal => "goal",
        /// `tether plan new`: draft goals read-only, then agree them.
        Plan => "plan",
        /// `tether ask`: a standalone question from a script.
        Ask => "ask",
    }
);

vocab!(
    /// Where a run stands, as shown by `tether status` and the dashboard.
    #[derive(Default)]
    RunStatus, "run status" {
        /// The loop is (or should be) iterating. The default, before any event.
        #[default]
        Running => "running",
        /// Stopped at an iteration boundary by a person or a rule; `tether resume` continues.
        Paused => "paused",
        /// Blocked in `ask_human` until a person answers a pending question.
        WaitingForInput => "waiting_for_input",
        /// Finished: the promise was printed or every goal was signed off.
        Completed => "completed",
        /// Finished: the iteration budget ran out; `tether resume` grants a new one.
        BudgetExhausted => "budget_exhausted",
        /// Finished: too many consecutive failures or an unrecoverable error.
        Failed => "failed",
        /// Finished: a person cancelled the run.
        Cancelled => "cancelled",
        /// Stopped by a guard (spinning, clean-end reminders, judge unavailable) for a human.
        Blocked => "blocked",
    }
);

impl RunStatus {
    /// Whether the loop is stopped (for now or for good) rather than running or waiting.
    pub fn is_stopped(self) -> bool {
        !matches!(self, RunStatus::Running | RunStatus::WaitingForInput)
    }
}

vocab!(
    /// Who asked something of a run (a pause, a message for its agent): a person, or the run's
    /// own agent through tether's commands (its `tether say` and `tether pause`, handed over
    /// from its sandbox or run in its process tree). Recorded with the request so nobody — the
    /// next prompt, the report, the timeline — takes the agent's words for a person's.
    #[derive(Default)]
    Author, "author" {
        /// A person: from their shell, the dashboard, a chat.
        #[default]
        Person => "person",
        /// The run's agent.
        Agent => "agent",
    }
);

impl Author {
    /// Whether this is a person (the default, left out of the JSON).
    pub fn is_person(&self) -> bool {
        *self == Author::Person
    }
}

vocab!(
    /// How a run ended (the payload of `run_finished`).
    Outcome, "run outcome" {
        /// The promise was printed or every goal was signed off.
        Completed => "completed",
        /// The iteration budget ran out.
        BudgetExhausted => "budget_exhausted",
        /// Too many consecutive failures or an unrecoverable error.
        Failed => "failed",
        /// A person cancelled the run.
        Cancelled => "cancelled",
        /// The process was interrupted (Ctrl+C); the run can be resumed.
        Interrupted => "interrupted",
        /// A guard stopped the run for a human.
        Blocked => "blocked",
    }
);

vocab!(
    /// A judge's (or a verify-only) decision on a sign-off attempt.
    Verdict, "verdict" {
        /// The goal is done.
        Accept => "accept",
        /// The goal is not done; see the reason and the missing list.
        Reject => "reject",
    }
);

vocab!(
    /// What kind of decision a sign-off attempt got, recorded with it so readers (the goal
    /// loop's rules, the dashboard) never guess it from the reason's wording.
    VerdictKind, "verdict kind" {
        /// Signed off: verify passed and the judge (if one is used) accepted with backed quotes.
        Accepted => "accepted",
        /// Rejected because the goal's verify command failed; the judge was not asked.
        VerifyFailed => "verify_failed",
        /// Rejected by the judge, or its accept was not backed by the quotes it cited.
        JudgeRejected => "judge_rejected",
        /// Rejected because the judge could not judge (error, timeout, no parsable verdict).
        JudgeUnavailable => "judge_unavailable",
        /// Rejected because the judge ruled the goal impossible as its contract states it: the
        /// run pauses for a person.
        JudgeImpossible => "judge_impossible",
        /// Rejected because the judge ruled the goal blocked on something only a person can
        /// give: the run pauses for a person.
        JudgeBlocked => "judge_blocked",
    }
);

impl VerdictKind {
    /// Accept for [`VerdictKind::Accepted`], reject for every other kind.
    pub fn verdict(self) -> Verdict {
        match self {
            VerdictKind::Accepted => Verdict::Accept,
            _ => Verdict::Reject,
        }
    }
}

vocab!(
    /// A goal-loop rule that took effect (the `rule` of a `rule_fired` event).
    Rule, "loop rule" {
        /// Iterations in a row with no tool call and no file change: the run is blocked.
        SpinGuard => "spin_guard",
        /// The same failing verify output keeps coming back: the agent is nudged.
        Oscillation => "oscillation",
        /// Files changed for several iterations but the plan did not: the upkeep reminder.
        Reminder => "reminder",
        /// Every subtask of a goal is ticked but it is not signed off.
        CleanEnd => "clean_end",
        /// The judge failed several times in a row: the run pauses for a human.
        JudgeUnavailable => "judge_unavailable",
        /// The judge ruled a goal impossible, or blocked on something only a person can give:
        /// the run pauses for a human.
        JudgeRuledOut => "judge_ruled_out",
        /// A goal was marked done without a sign-off and was set back to active.
        UnsignedDone => "unsigned_done",
        /// A goal was signed off without the judge in a run that has one: the accept does not
        /// count, and the goal was set back to active.
        UnjudgedAccept => "unjudged_accept",
        /// A goal of the run was set to `open` or `cancelled` without a sign-off or a person's
        /// cancel, and was set back to active.
        StatusReverted => "status_reverted",
        /// The agent cancelled a goal of the run: the run pauses until a person confirms it.
        CancelUnconfirmed => "cancel_unconfirmed",
        /// A goal of the run disappeared from the plan: the run pauses for a person.
        GoalRemoved => "goal_removed",
        /// A goal was rejected (or re-asked on an unchanged tree) several times in a row: a
        /// person is asked how to go on.
        CircuitBreaker => "circuit_breaker",
        /// The loop judge read an iteration and found the agent stuck: a person is asked.
        LoopJudgeBlocked => "loop_judge_blocked",
        /// The loop judge failed several times in a row and is off for the rest of the run.
        LoopJudgeOff => "loop_judge_off",
        /// tether.toml (any of its keys, or a variable that configures) changed while the run
        /// was driven: the run pauses for a person, the change not applied.
        SettingsChanged => "settings_changed",
    }
);

vocab!(
    /// How an iteration ended.
    IterationOutcome, "iteration outcome" {
        /// The agent's turn ended normally.
        Completed => "completed",
        /// The agent's turn errored.
        Failed => "failed",
        /// The loop stopped (pause, cancel, crash then resume) before the turn ended.
        Interrupted => "interrupted",
    }
);

vocab!(
    /// Where a question to a human stands.
    QuestionStatus, "question status" {
        /// Stored and offered; nobody has answered yet.
        Pending => "pending",
        /// The first answer has been recorded; later answers are refused.
        Answered => "answered",
        /// Withdrawn without an answer.
        Cancelled => "cancelled",
    }
);

#[cfg(test)]
#[path = "vocab_tests.rs"]
mod tests;

vocab!(
    /// Which judge a model call was for.
    JudgeRole, "judge" {
        /// The sign-off judge, checking a goal's claim to be done.
        SignOff => "sign_off",
        /// The loop judge, reading an iteration's final message.
        Loop => "loop",
    }
);
