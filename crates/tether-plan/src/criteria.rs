//! `tether goal add-criterion`: a person adds an acceptance criterion to a goal while it runs.
//!
//! The criterion is appended to the goal's `done_when:` line (`; ` and the text), or becomes a
//! `done_when:` line of its own under the goal's heading, id and status lines when it has none.
//! Only those bytes change. The contract's hash changes with it, so the goal cannot be signed off
//! until the contract is approved again — which the command does in the same act, as the
//! person who added it.

use crate::doc::{PatchError, PlanDoc};
use crate::patch::{self, Patch};

impl PlanDoc {
    /// The patch adding `criterion` (made one line) to the `done_when` of goal `id`.
    pub fn add_criterion(&self, id: &str, criterion: &str) -> Result<Patch, PatchError> {
        let goal = self.goal(id)?;
        let criterion = patch::one_line(criterion);
        if criterion.is_empty() {
            return Err(PatchError::EmptyCriterion);
        }
        if let Some(done_when) = &goal.done_when
            && let Some(line) = self.line(done_when.line)
        {
            let at = self.content(line).trim_end().len();
            let text = if done_when.value.trim().is_empty() {
                format!(" {criterion}")
            } else {
                format!("; {criterion}")
            };
            // After the value's last visible byte, keeping any trailing white space after it.
            return Ok(Patch::new(vec![patch::replace_in_line(
                line,
                at..at,
                &text,
            )]));
        }
        let after = [
            Some(goal.heading_line),
            goal.id.as_ref().map(|l| l.line),
            goal.status.as_ref().map(|f| f.line),
        ]
        .into_iter()
        .flatten()
        .filter(|&l| l <= goal.heading_line + 2)
        .max()
        .unwrap_or(goal.heading_line);
        let text = format!("done_when: {criterion}");
        Ok(Patch::new(vec![patch::insert_after(
            self.lines(),
            Some(after - 1),
            &[&text],
            self.ending_after(after),
        )]))
    }
}
