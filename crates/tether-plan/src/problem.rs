//! Problems found in a plan: what is wrong, on which line, and what was expected.
//!
//! Errors make a plan unpatchable (tether will not touch a file it does not fully understand);
//! warnings are shown as flags on the task list and by `tether validate`.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Shown as a flag; the plan can still be patched.
    Warning,
    /// The plan is not patched until this is fixed.
    Error,
}

/// What kind of problem; stable codes for programs reading `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// `status:` is not one of the four statuses.
    InvalidStatus,
    /// `threshold:` is not an integer from 0 to 5.
    InvalidThreshold,
    /// `budget:` does not read as amounts (`400k tokens, $5, 2h`).
    InvalidBudget,
    /// `network:` is not `on` or `off`.
    InvalidNetwork,
    /// Two goals share an id.
    DuplicateId,
    /// `after:` names an id no goal has.
    UnknownAfter,
    /// `after:` names the goal's own id.
    SelfAfter,
    /// Goals wait on each other through `after:` in a cycle, so none of them can start.
    AfterCycle,
    /// The id comment holds characters an id may not have, or nothing.
    InvalidId,
    /// A goal has two `<!-- id: … -->` lines.
    SecondId,
    /// A goal has no id line.
    MissingId,
    /// A goal has no `status:` line.
    MissingStatus,
    /// A goal has no `done_when:` line.
    MissingDoneWhen,
    /// A goal heading is followed by no fields at all.
    NoFields,
    /// A field appears twice in one goal.
    DuplicateField,
    /// A field has no value.
    EmptyField,
    /// A `key:` line that looks like a misspelt field.
    UnknownField,
    /// `## Goal:` with no title.
    EmptyTitle,
    /// `failure_modes:` with no list under it.
    EmptyList,
    /// Two `## Log` sections.
    SecondLog,
    /// A code fence that is never closed swallows the rest of the file.
    UnclosedFence,
    /// An HTML comment that is never closed hides the rest of the file.
    UnclosedComment,
}

impl ProblemKind {
    /// The stable snake_case code, as `--json` spells it.
    pub fn code(self) -> &'static str {
        match self {
            ProblemKind::InvalidStatus => "invalid_status",
            ProblemKind::InvalidThreshold => "invalid_threshold",
            ProblemKind::InvalidBudget => "invalid_budget",
            ProblemKind::InvalidNetwork => "invalid_network",
            ProblemKind::DuplicateId => "duplicate_id",
            ProblemKind::UnknownAfter => "unknown_after",
            ProblemKind::SelfAfter => "self_after",
            ProblemKind::AfterCycle => "after_cycle",
            ProblemKind::InvalidId => "invalid_id",
            ProblemKind::SecondId => "second_id",
            ProblemKind::MissingId => "missing_id",
            ProblemKind::MissingStatus => "missing_status",
            ProblemKind::MissingDoneWhen => "missing_done_when",
            ProblemKind::NoFields => "no_fields",
            ProblemKind::DuplicateField => "duplicate_field",
            ProblemKind::EmptyField => "empty_field",
            ProblemKind::UnknownField => "unknown_field",
            ProblemKind::EmptyTitle => "empty_title",
            ProblemKind::EmptyList => "empty_list",
            ProblemKind::SecondLog => "second_log",
            ProblemKind::UnclosedFence => "unclosed_fence",
            ProblemKind::UnclosedComment => "unclosed_comment",
        }
    }
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The stable code.
    pub kind: ProblemKind,
    /// The 1-based line.
    pub line: usize,
    /// The index (into `Plan::goals`) of the goal it concerns, if any.
    pub goal: Option<usize>,
    /// What is wrong and what was expected, for a human.
    pub message: String,
}

impl Problem {
    /// Whether this problem blocks patching.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "line {}: {sev}: {}", self.line, self.message)
    }
}

/// The plan has errors, so it is not patched. Fix the file (each problem names its line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PlanError {
    /// The plan file.
    pub path: PathBuf,
    /// The error-severity problems, in line order.
    pub problems: Vec<Problem>,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "{} has {n} error{}",
            self.path.display(),
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "\n  {}:{}: {}", self.path.display(), p.line, p.message)?;
        }
        Ok(())
    }
}
