//! `PlanDoc`: a plan file's text together with its parse, and the patches tether may make.
//!
//! Patches are computed only for a plan without errors, so a file tether does not fully
//! understand is never touched. Each patch is returned as a `Patch` against the current text; the
//! caller applies it (and usually re-parses the result with [`PlanDoc::apply`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::lines::{Line, LineEnding};
use crate::model::{Goal, Plan, Status};
use crate::patch::{self, Edit, Patch};
use crate::problem::PlanError;
use crate::{parse, syntax};

/// A patch could not be made. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The plan has errors; fix the file first (each problem names its line).
    #[error(transparent)]
    Invalid(#[from] PlanError),
    /// No goal has this id; check `tether plan` for the ids.
    #[error("no goal with id `{id}` in {path}{}", known_ids(.known))]
    UnknownGoal {
        /// The plan file.
        path: PathBuf,
        /// The id asked for.
        id: String,
        /// The ids that do exist.
        known: Vec<String>,
    },
    /// The goal has fewer subtasks than the index asked for.
    #[error("goal `{id}` has {count} subtask(s); there is no subtask number {number}")]
    NoSubtask {
        /// The goal's id.
        id: String,
        /// The 1-based subtask number asked for.
        number: usize,
        /// How many subtasks the goal has.
        count: usize,
    },
    /// A log entry must have some text.
    #[error("a log entry must not be empty")]
    EmptyLogEntry,
    /// An acceptance criterion must have some text.
    #[error("the criterion is empty; say what must also be true for the goal to be done")]
    EmptyCriterion,
}

fn known_ids(known: &[String]) -> String {
    if known.is_empty() {
        "; it has no goals with ids".to_owned()
    } else {
        format!("; known ids: {}", known.join(", "))
    }
}

/// An id that [`PlanDoc::add_missing_ids`] assigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedId {
    /// The goal's title.
    pub title: String,
    /// The id written into the file.
    pub id: String,
    /// The 1-based line of the goal's heading.
    pub heading_line: usize,
}

/// A plan file's text and its parse.
#[derive(Debug, Clone)]
pub struct PlanDoc {
    path: PathBuf,
    text: String,
    lines: Vec<Line>,
    plan: Plan,
}

impl PlanDoc {
    /// Parses `text`, read from `path` (used in messages only). Parsing always succeeds; problems
    /// are in [`Plan::problems`].
    pub fn parse(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        let text = text.into();
        let (plan, lines) = parse::parse(&text);
        PlanDoc {
            path: path.into(),
            text,
            lines,
            plan,
        }
    }

    /// The file the text came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text as parsed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Ok when the plan has no errors (warnings are allowed).
    pub fn check(&self) -> Result<(), PlanError> {
        let errors: Vec<_> = self
            .plan
            .problems
            .iter()
            .filter(|p| p.is_error())
            .cloned()
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(PlanError {
                path: self.path.clone(),
                problems: errors,
            })
        }
    }

    /// Applies `patch` (computed from this document) and parses the result.
    pub fn apply(&self, patch: &Patch) -> PlanDoc {
        PlanDoc::parse(self.path.clone(), patch.apply(&self.text))
    }

    pub(crate) fn goal(&self, id: &str) -> Result<&Goal, PatchError> {
        self.check()?;
        self.plan.goal(id).ok_or_else(|| PatchError::UnknownGoal {
            path: self.path.clone(),
            id: id.to_owned(),
            known: self
                .plan
                .goals
                .iter()
                .filter_map(|g| g.id().map(str::to_owned))
                .collect(),
        })
    }

    pub(crate) fn line(&self, number: usize) -> Option<&Line> {
        number.checked_sub(1).and_then(|i| self.lines.get(i))
    }

    /// A line's text without its terminator.
    pub(crate) fn content(&self, line: &Line) -> &str {
        &self.text[line.start..line.content_end]
    }

    /// The text's lines.
    pub(crate) fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// The ending for a line inserted after 1-based line `number`: that line's own, or the
    /// file's when it has none.
    pub(crate) fn ending_after(&self, number: usize) -> LineEnding {
        match self.line(number).map(|l| l.ending) {
            Some(LineEnding::None) | None => self.plan.line_ending,
            Some(e) => e,
        }
    }

    /// Sets the goal's `status:` value, replacing only the value's bytes; a goal without a
    /// `status:` line gets one under its heading (and id line).
    pub fn set_status(&self, id: &str, status: Status) -> Result<Patch, PatchError> {
        let goal = self.goal(id)?;
        if let Some(field) = &goal.status
            && let Some(line) = self.line(field.line)
            && let Some((_, _, range)) = syntax::field(self.content(line))
        {
            return Ok(Patch::new(vec![patch::replace_in_line(
                line,
                range,
                status.as_str(),
            )]));
        }
        let after = goal
            .id
            .as_ref()
            .filter(|l| l.line == goal.heading_line + 1)
            .map_or(goal.heading_line, |l| l.line);
        let text = format!("status: {status}");
        Ok(Patch::new(vec![patch::insert_after(
            &self.lines,
            Some(after - 1),
            &[&text],
            self.ending_after(after),
        )]))
    }

    /// Ticks (`checked = true`) or unticks subtask `number` (1-based, in file order) of the goal,
    /// replacing only the mark between the brackets.
    pub fn set_subtask(&self, id: &str, number: usize, checked: bool) -> Result<Patch, PatchError> {
        let goal = self.goal(id)?;
        let no_subtask = || PatchError::NoSubtask {
            id: id.to_owned(),
            number,
            count: goal.subtasks.len(),
        };
        let sub = number
            .checked_sub(1)
            .and_then(|i| goal.subtasks.get(i))
            .ok_or_else(no_subtask)?;
        let line = self.line(sub.line).ok_or_else(no_subtask)?;
        let (_, _, mark) = syntax::checkbox(self.content(line)).ok_or_else(no_subtask)?;
        if sub.checked == checked {
            return Ok(Patch::default());
        }
        let text = if checked { "x" } else { " " };
        Ok(Patch::new(vec![patch::replace_in_line(
            line,
            mark..mark + 1,
            text,
        )]))
    }

    /// Appends `- <entry>` to the `## Log` section (after its last entry), creating the section
    /// at the end of the file when there is none. Newlines in `entry` become spaces.
    pub fn append_log(&self, entry: &str) -> Result<Patch, PatchError> {
        self.check()?;
        let entry = patch::one_line(entry);
        if entry.is_empty() {
            return Err(PatchError::EmptyLogEntry);
        }
        let item = format!("- {entry}");
        let edit = if let Some(log) = &self.plan.log {
            let after = log.entries.last().map_or(log.heading_line, |e| e.line);
            patch::insert_after(
                &self.lines,
                Some(after - 1),
                &[&item],
                self.ending_after(after),
            )
        } else if let Some(last) = self.lines.last() {
            let n = self.lines.len();
            let blank = self.content(last).trim().is_empty();
            let new: &[&str] = if blank {
                &["## Log", &item]
            } else {
                &["", "## Log", &item]
            };
            patch::insert_after(&self.lines, Some(n - 1), new, self.ending_after(n))
        } else {
            patch::insert_after(&self.lines, None, &["## Log", &item], self.plan.line_ending)
        };
        Ok(Patch::new(vec![edit]))
    }

    /// Gives every goal without an `<!-- id: … -->` line one, derived from its title and unique
    /// within the file, inserted right under the heading.
    pub fn add_missing_ids(&self) -> Result<(Patch, Vec<AssignedId>), PatchError> {
        self.check()?;
        let mut taken: HashSet<String> = self
            .plan
            .goals
            .iter()
            .filter_map(|g| g.id().map(str::to_owned))
            .collect();
        let mut edits: Vec<Edit> = Vec::new();
        let mut assigned = Vec::new();
        for goal in self.plan.goals.iter().filter(|g| g.id.is_none()) {
            let base = syntax::slug(&goal.title);
            let mut id = base.clone();
            let mut n = 2;
            while taken.contains(&id) {
                id = format!("{base}-{n}");
                n += 1;
            }
            let comment = format!("<!-- id: {id} -->");
            edits.push(patch::insert_after(
                &self.lines,
                Some(goal.heading_line - 1),
                &[&comment],
                self.ending_after(goal.heading_line),
            ));
            taken.insert(id.clone());
            assigned.push(AssignedId {
                title: goal.title.clone(),
                id,
                heading_line: goal.heading_line,
            });
        }
        Ok((Patch::new(edits), assigned))
    }
}
