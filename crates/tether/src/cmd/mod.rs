//! One module per command. Each takes its parsed arguments, the context, and a writer for
//! stdout, and returns how it ended.

pub mod control;
pub mod demo;
pub mod foreground;
pub mod goal;
pub mod human;
pub mod init;
pub mod mcp;
pub mod plan;
pub mod ralph;
pub mod resume;
pub mod run;
pub mod validate;

use std::io::Write;

use tether_config::Env;
use tether_config::Workspace;

/// What every command gets from `main`.
pub struct Ctx<'a> {
    /// The workspace the command works in.
    pub ws: Workspace,
    /// The process environment (tests and embedders may substitute their own).
    pub env: &'a dyn Env,
    /// Where results go (stdout): text or JSON, nothing else.
    pub out: &'a mut dyn Write,
}
