//! The command line: what the user can type, parsed by clap with no I/O.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// tether keeps an autonomous coding agent on a goal, honest about "done", and within reach of
/// a human.
#[derive(Debug, Parser)]
#[command(name = "tether", version, after_help = crate::exit::HELP)]
pub struct Cli {
    /// Run as if tether was started in DIR (default: the nearest directory upwards holding
    /// tether.toml or .tether/, else the current one).
    #[arg(short = 'C', long = "workspace", value_name = "DIR", global = true)]
    pub workspace: Option<PathBuf>,

    /// More logs on stderr: -v info, -vv debug (TETHER_LOG=<filter> also works).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set up tether here: a commented tether.toml, a plan.md with an example goal, and .tether/
    /// (the store), git-ignored.
    Init(InitArgs),
    /// Check tether.toml and the plan file, listing every problem; exits 2 if there is any.
    Validate(JsonArgs),
    /// Show the plan's goals as a task list, with flags for what needs attention.
    Plan(JsonArgs),
}

/// Options of `tether init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing tether.toml and plan.md.
    #[arg(long)]
    pub force: bool,
}

/// `--json` for reading commands.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Print JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}
