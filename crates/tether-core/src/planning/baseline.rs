//! The plan as it was before drafting: what Cancel restores, and what a draft must keep (its
//! goals, by id or by title, and its log entries).

use std::path::Path;

use tether_plan::{Goal, Plan, PlanDoc};

use super::PlanRef;
use tether_plan::file::{self as plan_file, PlanFileError};

/// The file a saved baseline's text is kept in.
const SAVED: &str = "baseline.md";

/// The marker of a saved baseline that had no plan file.
const SAVED_NONE: &str = "baseline.none";

/// The plan as it was before drafting: restored on cancel, and what a draft must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    text: Option<String>,
    ids: Vec<String>,
    untitled: Vec<String>,
    log: Vec<String>,
}

impl Baseline {
    /// Reads the plan file (a missing file is an empty baseline). Fails when the file is not
    /// UTF-8 or has errors (each named with its line): drafting starts from a plan that parses.
    pub fn read(plan: &PlanRef) -> Result<Self, PlanFileError> {
        match plan_file::read(&plan.path) {
            Ok(doc) => Self::of(&doc),
            Err(PlanFileError::Missing { .. }) => Ok(Self::empty()),
            Err(e) => Err(e),
        }
    }

    /// Keeps the baseline in `dir` for a drafting agent's MCP server (`tether mcp --drafting
    /// <dir>`), which checks the agent's writes against it as the built-in agent's tools do.
    pub fn save(&self, dir: &Path) -> Result<(), PlanFileError> {
        let io = |cause| PlanFileError::Io {
            path: dir.to_owned(),
            cause,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        match &self.text {
            Some(text) => plan_file::write(&dir.join(SAVED), text),
            None => std::fs::write(dir.join(SAVED_NONE), "").map_err(io),
        }
    }

    /// The baseline [`save`](Self::save)d in `dir`.
    pub fn load(dir: &Path) -> Result<Self, PlanFileError> {
        match plan_file::read(&dir.join(SAVED)) {
            Ok(doc) => Self::of(&doc),
            Err(PlanFileError::Missing { .. }) if dir.join(SAVED_NONE).is_file() => {
                Ok(Self::empty())
            }
            Err(e) => Err(e),
        }
    }

    fn empty() -> Self {
        Baseline {
            text: None,
            ids: Vec::new(),
            untitled: Vec::new(),
            log: Vec::new(),
        }
    }

    fn of(doc: &PlanDoc) -> Result<Self, PlanFileError> {
        doc.check().map_err(tether_plan::PatchError::from)?;
        let plan = doc.plan();
        Ok(Baseline {
            ids: plan
                .goals
                .iter()
                .filter_map(|g| g.id())
                .map(str::to_owned)
                .collect(),
            untitled: plan
                .goals
                .iter()
                .filter(|g| g.id.is_none())
                .map(|g| g.title.clone())
                .collect(),
            log: plan
                .log
                .iter()
                .flat_map(|l| &l.entries)
                .map(|e| e.text.clone())
                .collect(),
            text: Some(doc.text().to_owned()),
        })
    }

    /// The file's text before drafting; `None` when there was no file.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Puts `plan`'s file back as it was (removing it if there was none).
    pub fn restore(&self, plan: &PlanRef) -> Result<(), PlanFileError> {
        match &self.text {
            Some(text) => plan_file::write(&plan.path, text),
            None => match std::fs::remove_file(&plan.path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(cause) => Err(PlanFileError::Io {
                    path: plan.path.clone(),
                    cause,
                }),
            },
        }
    }

    /// Whether `goal` was in the plan before drafting (by id, or by title for goals that had
    /// no id then).
    pub fn had(&self, goal: &Goal) -> bool {
        match goal.id() {
            Some(id) if self.ids.iter().any(|i| i == id) => true,
            _ => self.untitled.contains(&goal.title),
        }
    }

    /// What `plan` lost of the baseline: goals (by id or title) and log entries, described.
    pub fn dropped(&self, plan: &Plan) -> Vec<String> {
        let mut out = Vec::new();
        for id in &self.ids {
            if !plan.goals.iter().any(|g| g.id() == Some(id.as_str())) {
                out.push(format!("goal `{id}`"));
            }
        }
        for title in &self.untitled {
            if !plan.goals.iter().any(|g| &g.title == title) {
                out.push(format!("goal `{title}`"));
            }
        }
        let kept: Vec<&str> = plan
            .log
            .iter()
            .flat_map(|l| &l.entries)
            .map(|e| e.text.as_str())
            .collect();
        for entry in &self.log {
            if !kept.contains(&entry.as_str()) {
                out.push(format!("log entry `{entry}`"));
            }
        }
        out
    }
}
