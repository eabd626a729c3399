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
    /// Run the agent on the same prompt again and again, each time in a fresh context, until it
    /// keeps its completion promise or the budget is spent.
    Ralph(RalphArgs),
    /// Where a run stands: iteration n/max, state, last event (default: the latest run).
    Status(StatusArgs),
    /// Pause a run at its next iteration boundary (default: the latest run).
    Pause(RunArg),
    /// Stop a run now, ending its current iteration (default: the latest run).
    Cancel(RunArg),
    /// Ask a human from any script and print the answer (waits as long as it takes; Ctrl+C
    /// leaves the question pending).
    Ask(AskArgs),
    /// Answer a pending question from any shell; the waiting agent gets it at once.
    Answer(AnswerArgs),
    /// List the questions waiting for an answer.
    Questions(JsonArgs),
    /// Every question asked and how it was answered, newest first.
    History(HistoryArgs),
    /// Watch tether work: a Ralph loop in a fresh workspace with a scripted model (no AI is
    /// called) that writes, tests and fixes a small script until it keeps its promise.
    Demo(DemoArgs),
    /// Continue a paused, interrupted, killed or out-of-budget run from its last completed
    /// iteration (the budget starts again after it was spent).
    Resume(ResumeArgs),
    /// Serve ask_human and plan_status to any MCP client (Claude Code, Codex, pi, …) over
    /// stdio; questions are answered with `tether answer` or on Zulip.
    Mcp(McpArgs),
}

/// Options of `tether mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// File the questions under this run (default: $TETHER_RUN_ID; none: a standalone server).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// How often a waiting ask_human sends a progress notification, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000, hide = true)]
    pub progress_ms: u64,
}

/// Output formats for `--events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EventsFormat {
    /// One JSON object per line on stdout, for every event of the run.
    Jsonl,
}

/// Options of `tether ralph`.
#[derive(Debug, Args)]
pub struct RalphArgs {
    /// The prompt given to the agent each iteration.
    #[arg(
        required_unless_present = "prompt_file",
        conflicts_with = "prompt_file"
    )]
    pub prompt: Option<String>,
    /// Read the prompt from a file instead.
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<std::path::PathBuf>,
    /// The loop ends with success when the agent's final message of an iteration holds
    /// <promise>TEXT</promise> as its first promise tag.
    #[arg(long, value_name = "TEXT")]
    pub completion_promise: Option<String>,
    /// The iteration budget (default: loop.max_iterations, 20). 0 means unlimited; at most 20000.
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,
    /// Also write every event to stdout.
    #[arg(long, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
}

/// Options of `tether ask`.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// What you need decided.
    pub question: String,
    /// Error logs, code, options considered.
    #[arg(long, default_value = "")]
    pub context: String,
    /// 0-100: how sure you are you could resolve this alone.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub confidence: Option<u8>,
    /// Continue an earlier conversation (the thread_id of an earlier answer).
    #[arg(long = "thread", value_name = "ID")]
    pub thread: Option<String>,
    /// Print the answer as JSON (question_id, text, channel, responder, thread_id).
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The question's id (`tether questions` lists them).
    pub id: String,
    /// The answer.
    pub text: String,
    /// Who is answering (default: $USER).
    #[arg(long = "as", value_name = "NAME")]
    pub responder: Option<String>,
}

/// Options of `tether history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// How many questions to show.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Print JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to create the demo workspace (default: a new temporary directory, kept afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

/// Options of `tether status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The run (default: the latest).
    pub run: Option<String>,
    /// Print JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A run to act on.
#[derive(Debug, Args)]
pub struct RunArg {
    /// The run (default: the latest).
    pub run: Option<String>,
}

/// Options of `tether resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run (default: the latest).
    pub run: Option<String>,
    /// Also write every event to stdout.
    #[arg(long, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
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
