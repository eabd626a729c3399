//! The typed plan: what a parse of `plan.md` yields.
//!
//! The model records *where* each element lives (1-based line numbers) so that errors can name
//! the line and patches can touch that line alone. It is a read model: tether never serialises it
//! back into markdown.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::lines::LineEnding;
use crate::problem::Problem;

/// A value and the 1-based line it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// The 1-based line number.
    pub line: usize,
}

/// A goal's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written down, not being worked on.
    Open,
    /// Being worked on; the goal loop works every active goal.
    Active,
    /// Signed off.
    Done,
    /// Given up, with a reason in the log.
    Cancelled,
}

impl Status {
    /// Every status, in lifecycle order.
    pub const ALL: [Status; 4] = [
        Status::Open,
        Status::Active,
        Status::Done,
        Status::Cancelled,
    ];

    /// The word written in the plan file.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Active => "active",
            Status::Done => "done",
            Status::Cancelled => "cancelled",
        }
    }

    /// Whether the goal is finished one way or the other.
    pub fn is_closed(self) -> bool {
        matches!(self, Status::Done | Status::Cancelled)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not one of `open`, `active`, `done`, `cancelled`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a status; expected one of open, active, done, cancelled")]
pub struct UnknownStatus(pub String);

impl FromStr for Status {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownStatus(s.trim().to_owned()))
    }
}

/// A `- [ ]` / `- [x]` item of a goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subtask {
    /// The text after the checkbox.
    pub text: String,
    /// Whether the box is ticked.
    pub checked: bool,
    /// The 1-based line number.
    pub line: usize,
}

/// A field that must parse (a status, a threshold), with its line: either the parsed value, or
/// the text that did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field<T> {
    /// The parsed value, when the text is valid.
    pub value: Option<T>,
    /// The text after `key:` (trimmed), kept only when it did not parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
    /// The 1-based line number.
    pub line: usize,
}

/// One `## Goal: …` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Goal {
    /// The heading text after `Goal:`.
    pub title: String,
    /// The 1-based line of the heading.
    pub heading_line: usize,
    /// The 1-based last line of the goal's section (inclusive).
    pub end_line: usize,
    /// The stable id from `<!-- id: … -->`.
    pub id: Option<Located<String>>,
    /// `status:`; a goal without one is `open`.
    pub status: Option<Field<Status>>,
    /// `done_when:`, the condition that means done.
    pub done_when: Option<Located<String>>,
    /// `verify:`, the deterministic check run before the judge.
    pub verify: Option<Located<String>>,
    /// `failure_modes:`, ways the goal could look done while it is not.
    pub failure_modes: Vec<Located<String>>,
    /// `ask_before:`, command prefixes that need a human's yes.
    pub ask_before: Vec<Located<String>>,
    /// `threshold:` (0–5), overriding the run's interaction threshold.
    pub threshold: Option<Field<u8>>,
    /// `budget:` (`400k tokens, $5, 2h`), what work on this goal may spend; part of the
    /// contract.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Located<String>>,
    /// `network: on|off`: whether the agent's commands and the goal's verify may reach the
    /// network while the goal is active (the sandbox's default is off); part of the contract.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Field<bool>>,
    /// `after:` (`cache-layer, config`), the ids of the goals that must be signed off before
    /// this one starts; part of the contract.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Located<Vec<String>>>,
    /// The checkbox items, in file order.
    pub subtasks: Vec<Subtask>,
}

impl Goal {
    /// The effective status: the parsed `status:` value, or `open` when absent or invalid.
    pub fn status(&self) -> Status {
        self.status
            .as_ref()
            .and_then(|f| f.value)
            .unwrap_or(Status::Open)
    }

    /// The id, if the goal has one.
    pub fn id(&self) -> Option<&str> {
        self.id.as_ref().map(|l| l.value.as_str())
    }

    /// The effective threshold override, if one is set and valid.
    pub fn threshold(&self) -> Option<u8> {
        self.threshold.as_ref().and_then(|f| f.value)
    }

    /// The goal's budget, when it has a valid `budget:` line.
    pub fn budget(&self) -> Option<tether_budget::Budget> {
        self.budget
            .as_ref()
            .and_then(|l| tether_budget::parse_budget(&l.value).ok())
    }

    /// Whether the goal opens the network (`network: on`).
    pub fn network(&self) -> bool {
        self.network.as_ref().and_then(|f| f.value) == Some(true)
    }

    /// The ids this goal waits on (its `after:` list), in file order; empty without one.
    pub fn after(&self) -> &[String] {
        self.after.as_ref().map_or(&[], |l| l.value.as_slice())
    }

    /// How many subtasks are ticked.
    pub fn done_subtasks(&self) -> usize {
        self.subtasks.iter().filter(|s| s.checked).count()
    }
}

/// One `- …` line of the `## Log` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    /// The text after the bullet.
    pub text: String,
    /// The 1-based line number.
    pub line: usize,
}

/// The `## Log` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Log {
    /// The 1-based line of the `## Log` heading.
    pub heading_line: usize,
    /// The 1-based last line of the section (inclusive).
    pub end_line: usize,
    /// The entries, oldest first.
    pub entries: Vec<LogEntry>,
}

/// A parsed plan file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The objective from the `# Plan: …` heading (or the first `#` heading).
    pub title: Option<Located<String>>,
    /// Every goal, in file order.
    pub goals: Vec<Goal>,
    /// The `## Log` section, if there is one.
    pub log: Option<Log>,
    /// The line ending tether uses for lines it inserts (the file's first one).
    pub line_ending: LineEnding,
    /// Every problem found, errors and warnings, in line order.
    pub problems: Vec<Problem>,
}

impl Plan {
    /// The goal with this id, if exactly one has it.
    pub fn goal(&self, id: &str) -> Option<&Goal> {
        let mut found = self.goals.iter().filter(|g| g.id() == Some(id));
        match (found.next(), found.next()) {
            (Some(g), None) => Some(g),
            _ => None,
        }
    }

    /// Goals whose status is `active`.
    pub fn active_goals(&self) -> impl Iterator<Item = &Goal> {
        self.goals.iter().filter(|g| g.status() == Status::Active)
    }

    /// Whether any problem is an error (the plan then may not be patched).
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Problem::is_error)
    }
}
