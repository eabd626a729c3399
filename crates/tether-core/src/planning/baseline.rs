//! The plan as it was before drafting: what Cancel restores, and what a draft must keep (its
//! goals, by id or by title, and its log entries).

use tether_plan::{Goal, Plan};

use super::PlanRef;
use tether_plan::file::{self as plan_file, PlanFileError};

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
        let doc = match plan_file::read(&plan.path) {
            Ok(doc) => doc,
            Err(PlanFileError::Missing { .. }) => {
                return Ok(Baseline {
                    text: None,
                    ids: Vec::new(),
                    untitled: Vec::new(),
                    log: Vec::new(),
                });
            }
            Err(e) => return Err(e),
        };
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
