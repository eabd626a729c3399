//! What a loop supplies to the driver ([`super::drive`]): the prompt of each iteration and what
//! to do with its outcome. Everything else — the checks at each iteration boundary, the budget,
//! the journal events, the agent turn, its errors, finishing the run — is the driver's, and so
//! the same for every loop.

use tether_store::{Budget, Outcome, RunId};

use super::{Deps, LoopError};
use crate::prompts::Feedback;

/// A loop's limits, from its spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The budget; `None` is unlimited.
    pub max_iterations: Option<u32>,
    /// The budgets in the other units (`iterations` unused); unset units are unlimited.
    pub budget: Budget,
    /// Failed iterations in a row that stop the run.
    pub max_consecutive_failures: u32,
}

/// A goal the next iteration works on.
#[derive(Debug, Clone, PartialEq)]
pub struct Focus {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its own budget (its `budget:` line), if it has one.
    pub budget: Option<Budget>,
}

/// What an iteration's agent turn is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The whole prompt: what a turn from a fresh context is given.
    pub whole: String,
    /// What a turn continuing the agent's session of the last iteration is given instead (what
    /// is new since), when the loop lets the agent continue; `None`: every turn starts fresh.
    pub continued: Option<String>,
}

impl Prompt {
    /// A prompt for a turn that always starts from a fresh context.
    pub fn fresh(whole: String) -> Self {
        Prompt {
            whole,
            continued: None,
        }
    }
}

/// The run a loop works on, handed to each of its steps.
#[derive(Clone, Copy)]
pub struct At<'a> {
    /// What the loop runs with.
    pub deps: &'a Deps,
    /// The run.
    pub run: &'a RunId,
}

/// An agent turn that completed, as the loop sees it.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The agent's final message.
    pub final_message: &'a str,
    /// Its first line, shortened, as recorded in the journal.
    pub summary: &'a str,
    /// The tool calls the agent made.
    pub tool_calls: u32,
}

/// How a run stops in the ways every loop shares, declared once: each loop's `End` has one
/// variant wrapping it (`GoalEnd::Stopped`, `RalphEnd::Stopped`) beside the endings of its own,
/// so a new way to stop added here reaches both loops' callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// `tether cancel` stopped it.
    Cancelled,
    /// Ctrl+C stopped it; `tether resume` continues.
    Interrupted,
    /// It paused for a person at an iteration boundary: `tether pause`, a rule, a usage limit
    /// that cannot be waited out, a question nobody can be asked; `tether resume` continues.
    Paused {
        /// Why.
        reason: String,
    },
    /// The budget was spent.
    BudgetSpent {
        /// The last iteration run.
        iteration: u32,
    },
    /// The agent cannot run until its setup is fixed (its CLI is missing, tether's tools did not
    /// reach it); retrying would not help.
    CannotRun {
        /// The iteration that found it.
        iteration: u32,
        /// What is wrong and how to fix it.
        error: String,
    },
    /// Too many iterations failed in a row.
    Failed {
        /// The last iteration run.
        iteration: u32,
        /// The last error.
        error: String,
    },
    /// Another process took the run up (this one's lease lapsed, or it was taken over): this
    /// process wrote nothing more and stopped; the run goes on where that one drives it.
    LeaseLost {
        /// Why this process no longer drives it.
        detail: String,
    },
}

/// What a loop decides at one of its steps; the driver records the ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next<E> {
    /// Go on to the next step.
    Continue,
    /// The run ends with `Outcome` (recorded as `run_finished`).
    Finish(Outcome, E),
    /// The run pauses for a human, for the reason given (recorded as `paused`).
    Pause(String, E),
    /// A person is asked; their answer goes to [`LoopKind::answered`]. When nobody can be asked
    /// the run pauses, saying why.
    Ask(HumanCall),
}

/// Why a loop asks a person between iterations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A goal was rejected `escalate_after_rejects` times in a row.
    CircuitBreaker {
        /// The goal.
        goal: String,
        /// Rejections in a row.
        rejects: u32,
    },
    /// The loop judge found the agent stuck.
    LoopJudge,
}

/// A question a loop puts to a person between iterations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanCall {
    /// Why it is asked.
    pub why: Why,
    /// The question.
    pub question: String,
    /// What the person needs to decide.
    pub context: String,
    /// The choices offered (free text is always allowed).
    pub options: Vec<String>,
    /// Why the run pauses when nobody can be asked (the reason for asking, in a few words).
    pub unreachable: String,
}

/// A person's answer to a [`HumanCall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The answer (an option's label when an option was chosen).
    pub text: String,
    /// The option chosen, or `None` for the person's own words.
    pub choice: Option<usize>,
    /// Who answered.
    pub by: String,
}

/// One kind of loop (Ralph, goal): what differs between loops.
pub trait LoopKind {
    /// How the loop ends.
    type End: From<Stopped>;

    /// The budget and the failure limit.
    fn limits(&self) -> Limits;

    /// The goals the next iteration works on, each with its own budget (its `budget:` line):
    /// their usage is charged to them and their budgets are checked with the run's. Asked after
    /// [`LoopKind::before`]; a loop without goals has none.
    fn working_on(&self) -> Vec<Focus> {
        Vec::new()
    }

    /// At each iteration boundary, after the pause, cancel and Ctrl+C checks and before the
    /// budget's: `done` iterations are behind. The goal loop reconciles the plan with the store
    /// here and ends the run when no goal is left.
    fn before(&mut self, at: At<'_>, done: u32) -> Result<Next<Self::End>, LoopError> {
        let _ = (at, done);
        Ok(Next::Continue)
    }

    /// The prompt of iteration `n`. `owed` is what the driver owes the agent first: the
    /// messages a person sent (`tether say`), already recorded as delivered.
    fn prompt(&mut self, at: At<'_>, n: u32, owed: Vec<Feedback>) -> Result<Prompt, LoopError>;

    /// After iteration `n`'s turn completed (and was recorded): go on or end.
    fn after(&mut self, at: At<'_>, n: u32, turn: Turn<'_>) -> Result<Next<Self::End>, LoopError>;

    /// A person answered a question this loop asked ([`Next::Ask`]).
    fn answered(
        &mut self,
        at: At<'_>,
        call: &HumanCall,
        answer: Answered,
    ) -> Result<Next<Self::End>, LoopError> {
        let _ = (at, call, answer);
        Ok(Next::Continue)
    }
}
