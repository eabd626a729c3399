//! tether's core: the logic between the command line and the libraries.
//!
//! It knows the workspace layout, reads and safely patches the plan file, sets a repository up
//! (`init`) and checks it (`validate`). It never prints: the binary decides what reaches the
//! terminal, so stdout stays free for protocols and `--json`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod control;
pub mod goal;
pub mod human;
pub mod init;
pub mod journal;
pub mod looping;
pub mod plan_file;
pub mod planning;
pub mod prompts;
pub mod ralph;
pub mod run_lock;
pub mod signoff;
pub mod validate;
pub mod workspace;

pub use workspace::Workspace;
