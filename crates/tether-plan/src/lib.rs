//! The plan file format of tether: `plan.md`.
//!
//! One git-tracked markdown file holds the goals (each a contract: `done_when`, `verify`,
//! `failure_modes`, `ask_before`, `budget`, `network`, `after` — the goals it waits on — plus a
//! `threshold` and subtasks) and a short append-only log. The agent
//! edits it with its ordinary tools; tether only **parses** it and makes a few exact line-level
//! **patches** — flip a status, tick a subtask, append a log line, add a missing id — and never
//! re-serialises it, so every byte tether does not mean to change stays as it was.
//!
//! The format itself is pure (strings in, strings out); [`file`] is the one place that reads the
//! plan from disk (bounded) and writes a patch back (only if the file did not change meanwhile,
//! through a temporary file and a rename).
//!
//! ```
//! use tether_plan::{PlanDoc, Status};
//!
//! let text = "# Plan: demo\n\n## Goal: Ship it\n<!-- id: ship -->\nstatus: active\n\
//!             done_when: it ships\n\n- [ ] build\n";
//! let doc = PlanDoc::parse("plan.md", text);
//! assert_eq!(doc.plan().goals[0].status(), Status::Active);
//!
//! let patch = doc.set_status("ship", Status::Done)?;
//! let after = doc.apply(&patch);
//! assert_eq!(after.plan().goals[0].status(), Status::Done);
//! assert_eq!(after.text(), text.replace("status: active", "status: done"));
//! # Ok::<(), tether_plan::PatchError>(())
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod after;
mod archive;
mod contract;
mod criteria;
mod doc;
pub mod file;
mod lines;
mod model;
mod parse;
mod patch;
mod problem;
pub mod render;
mod states;
mod syntax;

pub use archive::ARCHIVE_HEADING;
pub use doc::{AssignedId, PatchError, PlanDoc};
pub use file::PlanFileError;
pub use lines::LineEnding;
pub use model::{Field, Goal, Located, Log, LogEntry, Plan, Status, Subtask, UnknownStatus};
pub use patch::{Edit, Patch};
pub use problem::{PlanError, Problem, ProblemKind, Severity};
pub use states::{ApprovedContract, ContractState, GoalContract, contract_states};

/// Derives a goal id from a title the way tether does for goals that lack one.
pub fn id_from_title(title: &str) -> String {
    syntax::slug(title)
}
