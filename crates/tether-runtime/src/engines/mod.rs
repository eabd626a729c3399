//! The engines of single commands: what one command of a front end does, apart from reading
//! its arguments and printing. Each composes what it needs from [`crate::compose`]; none is a
//! part of a run.
//!
//! - [`doctor`]: the checks of the setup `tether doctor` prints.
//! - [`status`]: a run's status as a person reads it (`tether status`).
//! - [`ask`]: a question asked from a shell (`tether ask`), and who answered told (`tether
//!   answer`).
//! - [`gate`]: the decision of `tether gate`, the hook that holds an agent CLI's command for
//!   `[human] ask_before`.
//! - [`mcp`]: `tether mcp`'s server composed.
//! - [`signoff`]: a goal signed off by a person (`tether goal complete`).
//! - [`plan`]: the flags on a plan's goals only the store can tell (`tether plan`), and a
//!   criterion added (`tether goal add-criterion`).
//! - [`drafting`]: the restricted agent plan mode (`tether plan new`) drafts with.
//! - [`side`]: a question about a run asked on the side (`tether side`, the dashboard's "Ask
//!   about this run"), answered by a read-only model session that never reaches the run.
//! - [`push`]: a workspace's history copied into the team store (`tether store push`).
//! - [`demo`]: `tether demo`'s run, with scripted models.
//! - [`judge_test`]: the judge measured on the corpus (`tether judge test`).

pub mod ask;
pub mod demo;
pub mod doctor;
pub mod drafting;
pub mod gate;
pub mod judge_test;
pub mod mcp;
pub mod plan;
pub mod push;
pub mod side;
pub mod signoff;
pub mod status;
