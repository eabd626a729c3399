//! `tether plan archive`: moves the goals that are done or cancelled into a `## Archive` section
//! at the end of the plan, so the goals still to do are the ones a reader sees first.
//!
//! A move is a patch like every other: each archived goal's lines are cut where they are and
//! pasted, byte for byte, at the end of the archive section (created at the end of the file the
//! first time); no other byte changes. Archived goals are still goals — `tether plan` counts them,
//! sign-off records still name them — they are only out of the way. Goals already in the archive
//! stay where they are.

use crate::doc::{PatchError, PlanDoc};
use crate::lines::LineEnding;
use crate::model::Status;
use crate::patch::{Edit, Patch};

/// The archive section's heading.
pub const ARCHIVE_HEADING: &str = "## Archive";

impl PlanDoc {
    /// The patch that archives every done or cancelled goal not archived yet, and their titles
    /// in file order (empty, with an empty patch, when there is none).
    pub fn archive_finished(&self) -> Result<(Patch, Vec<String>), PatchError> {
        self.check()?;
        let lines = self.lines();
        let archive = lines
            .iter()
            .position(|l| self.content(l).trim_end() == ARCHIVE_HEADING);
        let finished: Vec<_> = self
            .plan()
            .goals
            .iter()
            .filter(|g| matches!(g.status(), Status::Done | Status::Cancelled))
            .filter(|g| archive.is_none_or(|a| g.heading_line - 1 < a))
            .collect();
        if finished.is_empty() {
            return Ok((Patch::default(), Vec::new()));
        }
        let eol = self.plan().line_ending.as_str();
        let mut moved = String::new();
        let mut edits = Vec::new();
        for goal in &finished {
            let first = &lines[goal.heading_line - 1];
            let last = &lines[goal.end_line - 1];
            moved.push_str(&self.text()[first.start..last.end()]);
            if last.ending == LineEnding::None {
                moved.push_str(eol);
            }
            edits.push(Edit {
                range: first.start..last.end(),
                text: String::new(),
            });
        }
        let (at, paste) = match archive {
            Some(a) => (self.archive_end(a), moved),
            None => {
                // The new section follows the last line that stays where it is.
                let kept = (0..lines.len()).rev().find(|&i| {
                    !finished
                        .iter()
                        .any(|g| (g.heading_line - 1..g.end_line).contains(&i))
                });
                (self.text().len(), self.new_archive(moved, kept))
            }
        };
        edits.push(Edit {
            range: at..at,
            text: paste,
        });
        let titles = finished.iter().map(|g| g.title.clone()).collect();
        Ok((Patch::new(edits), titles))
    }

    /// Where the archive that starts at line index `heading` ends: before the first `##`
    /// heading after it that is not a goal's, else at the end of the text.
    fn archive_end(&self, heading: usize) -> usize {
        let lines = self.lines();
        lines[heading + 1..]
            .iter()
            .find(|l| {
                let text = self.content(l);
                text.starts_with("## ") && !text.starts_with("## Goal:")
            })
            .map_or(self.text().len(), |l| l.start)
            .max(lines[heading].end())
    }

    /// The text of a new archive section at the end of the file, holding `moved`, after the
    /// line at index `kept` (the last one not moved).
    fn new_archive(&self, moved: String, kept: Option<usize>) -> String {
        let eol = self.plan().line_ending.as_str();
        let mut text = String::new();
        match kept.map(|i| &self.lines()[i]) {
            Some(last) if last.ending == LineEnding::None => {
                text.push_str(eol);
                if !self.content(last).trim().is_empty() {
                    text.push_str(eol);
                }
            }
            Some(last) if !self.content(last).trim().is_empty() => text.push_str(eol),
            _ => {}
        }
        text.push_str(ARCHIVE_HEADING);
        text.push_str(eol);
        text.push_str(eol);
        text.push_str(&moved);
        text
    }
}
