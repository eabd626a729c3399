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
    /// Set up tether here: a tether.toml (a short working one for your agent with --agent, else
    /// every setting commented), a plan.md with an example goal, and .tether/ (the store),
    /// git-ignored.
    Init(InitArgs),
    /// Check tether.toml and the plan file, listing every problem; exits 2 if there is any.
    Validate(JsonArgs),
    /// Show the plan's goals as a task list, with flags for what needs attention.
    ///
    /// `tether plan new "<objective>"` drafts goals with the agent (plan mode); `tether plan
    /// approve` locks their contracts.
    Plan(PlanArgs),
    /// Work toward the plan's active goals, iteration after iteration, until each is signed off
    /// by its verify command and an independent judge, the budget is spent, or a rule stops it.
    Run(RunArgs),
    /// Run the agent on the same prompt again and again, each time in a fresh context, until it
    /// keeps its completion promise or the budget is spent.
    Ralph(RalphArgs),
    /// Where a run stands: iteration n/max, state, last event (default: the latest run).
    Status(StatusArgs),
    /// Pause a run at its next iteration boundary (default: the latest run).
    Pause(RunArg),
    /// Stop a run now, ending its current iteration (default: the latest run).
    Cancel(RunArg),
    /// Send the agent of a run a message, delivered at the start of its next iteration.
    Say(SayArgs),
    /// Ask a question about a run on the side, answered by the side model ([side], else
    /// [model]) from the run's record and the repository; it never reaches the agent nor
    /// pauses the run (default: the latest run).
    Side(SideArgs),
    /// Watch every run in the terminal: grouped needs input / running / paused / done, the
    /// selected run's live header and timeline; answer its question, pause, cancel or say.
    Watch,
    /// Ask a human from any script and print the answer (waits as long as it takes; Ctrl+C
    /// leaves the question pending).
    Ask(AskArgs),
    /// Answer a pending question from any shell; the waiting agent gets it at once.
    Answer(AnswerArgs),
    /// List the questions waiting for an answer.
    Questions(JsonArgs),
    /// Every question asked and how it was answered, newest first.
    History(HistoryArgs),
    /// Watch tether work: a goal loop in a fresh workspace with scripted models (no AI is
    /// called): the agent writes and fixes a small script, asks you one question, and the goal is
    /// signed off by a real verify and a judge citing the file.
    Demo(DemoArgs),
    /// Continue a paused, interrupted, killed or out-of-budget run from its last completed
    /// iteration (the budget starts again after it was spent).
    Resume(ResumeArgs),
    /// Sign a goal off by hand (its verify command, then the judge) or cancel it.
    #[command(subcommand)]
    Goal(GoalCommand),
    /// Check the setup: the config, the executor (an agent CLI's version and the key its own
    /// configuration names), the sandbox, tether's MCP server, the store, the model endpoints,
    /// the chat channels (Zulip, Slack, Telegram) and the notice sinks (ntfy, webhook, email,
    /// a command); each failure with its fix. Exits 1 if any check fails.
    Doctor(DoctorArgs),
    /// Serve ask_human and plan_status to any MCP client (Claude Code, Codex, pi, …) over
    /// stdio; a question is answered in the client's own prompt, with `tether answer`, on the
    /// dashboard, or on the channels human.channels lists (Zulip, Slack, Telegram, ntfy).
    Mcp(McpArgs),
    /// Serve the dashboard and its JSON API: every run of this workspace (also those driven by
    /// other processes), live timelines, the questions waiting for an answer; and runs started
    /// or resumed there, driven by this process until they end or it is stopped.
    Serve(ServeArgs),
    /// What a run did, readable in a minute: its outcome and time, usage, each goal's sign-off
    /// attempts with the judge's cited quotes, the questions and answers, the messages sent.
    /// Written to .tether/runs/<run>/report.md and printed.
    Report(ReportArgs),
    /// Measure the configured [judge]: run it through the real sign-off check on a corpus of
    /// honest and gamed completions and count its false accepts and false rejects.
    #[command(subcommand)]
    Judge(JudgeCommand),
    /// The team store: copy this workspace's history into it (`tether store push`).
    #[command(subcommand)]
    Store(StoreCommand),
    /// The worktrees of runs started with --worktree: list them, or remove one no run is using
    /// (its branch is kept).
    #[command(subcommand)]
    Worktree(WorktreeCommand),
    /// Work on the goals of runs of many goals started on other machines (`tether run
    /// --parallel N --workers`): claim a ready goal in the team store, clone or fetch the run's
    /// repository from its shared remote, run the goal in a worktree of its own with this
    /// machine's keys, push its signed-off branch; then the next goal, until stopped.
    Worker(WorkerArgs),
    /// Goals on a schedule: a Ralph run or a goal every so long or on a cron expression, each
    /// fire a normal run; repeated failures pause the schedule with a notice, a late one sends
    /// an "overdue" notice, missed fires give one catch-up run. `tether schedule run` is the
    /// scheduler; `tether schedule install` keeps it running.
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Print a completion script for SHELL on stdout, generated from this command line (where to
    /// put it: the book's "Getting started").
    Completions(CompletionsArgs),
    /// Print tether's manual page on stdout (roff, every command and option), generated from
    /// this command line: `tether man > ~/.local/share/man/man1/tether.1`.
    Man,
    /// A `PreToolUse` hook for an agent CLI (Claude Code): reads the hook's JSON on stdin and,
    /// when the Bash command starts with an `ask_before` prefix, asks a human and waits; prints
    /// the hook's decision (allow after a yes, deny otherwise) on stdout.
    #[command(hide = true)]
    Gate(GateArgs),
}

/// `tether plan` and its subcommands.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PlanArgs {
    /// Print the parsed plan as JSON on stdout instead of the task list.
    #[arg(long)]
    pub json: bool,
    /// Draft or approve goals instead of showing them.
    #[command(subcommand)]
    pub command: Option<PlanCommand>,
}

/// What `tether plan` can do besides showing the task list.
#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Plan mode: the agent drafts goals for an objective; you review them; Ready locks them.
    ///
    /// The agent explores the repository read-only and may write only the plan file. It drafts
    /// goals with done_when, an optional verify command, 2-3 failure modes and subtasks. On a
    /// terminal you choose Ready (lock the contracts), Edit (ask the agent for changes), $EDITOR
    /// (edit by hand) or Cancel (restore the plan). Without a terminal, --approve locks the
    /// draft; without it the draft stays unapproved. The agent is the [executor] agent CLI
    /// (claude, codex, pi) in its read-only mode, or else the built-in agent on [model].
    New(PlanNewArgs),
    /// Lock goal contracts that were never approved or changed since.
    ///
    /// A contract is a goal's done_when, verify, failure_modes and ask_before. Its hash is
    /// recorded; a goal whose contract changed afterwards is not signed off until it is approved
    /// again.
    Approve(PlanApproveArgs),
    /// Move the goals that are done or cancelled into a `## Archive` section at the end of the
    /// plan, byte for byte (every other line is kept as it is); archived goals are still goals.
    Archive(PlanArchiveArgs),
}

/// Options of `tether plan archive`.
#[derive(Debug, Args)]
pub struct PlanArchiveArgs {
    /// Print the titles of the goals moved as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether plan new`.
#[derive(Debug, Args)]
pub struct PlanNewArgs {
    /// What the goals should achieve.
    pub objective: String,
    /// The model that drafts, by name on plan mode's endpoint (default: [planning] model, else
    /// [model] model).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Accept the draft without the review menu and lock its contracts (for scripts).
    #[arg(long)]
    pub approve: bool,
    /// Print the drafted goals and what was approved as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether plan approve`.
#[derive(Debug, Args)]
pub struct PlanApproveArgs {
    /// The goals to approve, by id.
    #[arg(value_name = "ID", conflicts_with = "all")]
    pub ids: Vec<String>,
    /// Approve every open or active goal whose contract was never approved or changed since,
    /// without asking. (With neither ids nor --all, tether asks on a terminal.)
    #[arg(long)]
    pub all: bool,
}

/// Options of `tether serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (default: `[server] listen` in tether.toml, else
    /// 127.0.0.1:0, a free port on loopback).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Allow a non-loopback address: the dashboard is then reachable from other machines (still
    /// only with the token).
    #[arg(long)]
    pub allow_remote: bool,
    /// Show a team store (postgres://user@host:port/database) instead of this workspace's:
    /// every run of every machine (default: $TETHER_STORE_URL, else `[store] url`). The password
    /// comes from PGPASSWORD or ~/.pgpass, never from this flag's URL in a shared shell history.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

/// Options of `tether worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Where the worker keeps its clones and the goals' worktrees (default:
    /// $XDG_STATE_HOME/tether/worker, else ~/.local/state/tether/worker).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
    /// Work on the goals ready now, then exit once none is left (default: wait for more).
    #[arg(long)]
    pub once: bool,
    /// How often to look for a ready goal while none is, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub poll: u64,
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
    /// Also serve plan mode's write_plan and edit_plan for the drafting session in DIR (set by
    /// `tether plan new` for an agent CLI).
    #[arg(long, value_name = "DIR", hide = true)]
    pub drafting: Option<std::path::PathBuf>,
    /// Inside tether's sandbox: hand the session to the process driving the run through this
    /// socket (set by tether for an agent CLI's MCP server).
    #[arg(long, value_name = "SOCKET", hide = true)]
    pub bridge: Option<std::path::PathBuf>,
}

/// Options of `tether gate`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// File the question under this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
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
    /// The budgets in tokens, dollars and time.
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Where the run works.
    #[command(flatten)]
    pub place: PlaceArgs,
    /// Also write every event to stdout.
    #[arg(long, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
}

/// Where a new run works (default: [run] worktree).
#[derive(Debug, Args, Clone, Copy)]
pub struct PlaceArgs {
    /// Work in a git worktree of its own, on a new branch tether/<run-id> from HEAD, outside
    /// this checkout (which is never written).
    #[arg(long)]
    pub worktree: bool,
    /// In a worktree: commit each signed-off goal on the run's branch (--commit=false leaves
    /// the changes uncommitted).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub commit: bool,
}

/// A run's budgets besides iterations (default: [loop] max_tokens, max_cost_usd, max_duration).
#[derive(Default, Debug, Args)]
pub struct BudgetArgs {
    /// Tokens the run may use, agent and judges together (400000, 400k, 1.5M).
    #[arg(long, value_name = "TOKENS", value_parser = tether_budget::parse_tokens)]
    pub max_tokens: Option<u64>,
    /// US dollars the run may spend (5, $5, 0.50).
    #[arg(long = "max-cost", value_name = "USD", value_parser = tether_budget::parse_cost)]
    pub max_cost_usd: Option<f64>,
    /// Running time the run may take, not counting pauses and waits for answers (90m, 8h).
    #[arg(long, value_name = "TIME", value_parser = tether_budget::parse_duration)]
    pub max_duration: Option<u64>,
}

/// What `tether resume` adds to a run's budget (a human act).
#[derive(Debug, Args)]
pub struct RaiseArgs {
    /// Tokens to add (500k).
    #[arg(long, value_name = "TOKENS", value_parser = tether_budget::parse_tokens)]
    pub add_tokens: Option<u64>,
    /// US dollars to add (5).
    #[arg(long, value_name = "USD", value_parser = tether_budget::parse_cost)]
    pub add_cost: Option<f64>,
    /// Running time to add (2h).
    #[arg(long, value_name = "TIME", value_parser = tether_budget::parse_duration)]
    pub add_time: Option<u64>,
    /// Iterations to add (10).
    #[arg(long, value_name = "N", value_parser = tether_budget::parse_iterations)]
    pub add_iterations: Option<u32>,
}

/// Options of `tether run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The iteration budget (default: loop.max_iterations, 20). 0 means unlimited; at most 20000.
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,
    /// The budgets in tokens, dollars and time.
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// The interaction threshold for this run, 0 (never ask) to 5 (default: human.threshold).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u8).range(0..=5))]
    pub threshold: Option<u8>,
    /// Sign goals off by their verify command alone, without a judge (recorded as such).
    #[arg(long)]
    pub no_judge: bool,
    /// Approve the contracts of goals never approved (or changed since) without asking.
    #[arg(long)]
    pub approve: bool,
    /// Work on up to N goals at once, each in a git worktree of its own, in `after:` order,
    /// merged back into the run's branch tether/<run-id> (default: run.parallel; 1 without it
    /// works on every goal in one run).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel: Option<u32>,
    /// With --parallel: offer the goals to workers on other machines (`tether worker`, sharing
    /// the team store) instead of working on them here; they fetch from and push to the
    /// repository's shared remote (--remote).
    #[arg(long, requires = "parallel")]
    pub workers: bool,
    /// The shared remote of --workers: a remote of the repository, or a URL.
    #[arg(
        long,
        value_name = "REMOTE",
        default_value = "origin",
        requires = "workers"
    )]
    pub remote: String,
    /// Where the run works.
    #[command(flatten)]
    pub place: PlaceArgs,
    /// Also write every event to stdout.
    #[arg(long, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
}

/// Options of `tether say`.
#[derive(Debug, Args)]
pub struct SayArgs {
    /// The message.
    pub message: String,
    /// The run (default: the latest).
    #[arg(long)]
    pub run: Option<String>,
}

/// Options of `tether side`.
#[derive(Debug, Args)]
pub struct SideArgs {
    /// The question about the run.
    pub question: String,
    /// The run (default: the latest).
    #[arg(long)]
    pub run: Option<String>,
    /// Print `{"run", "question", "answer", "model", ...}` as JSON.
    #[arg(long)]
    pub json: bool,
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
    /// A choice to offer (give it 2-6 times); the person picks one or answers in their own words.
    #[arg(long = "option", value_name = "LABEL")]
    pub options: Vec<String>,
    /// Print the answer as JSON (question_id, text, channel, responder, thread_id, choice).
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
    /// Who is answering (default: [human] name, else git's user.name, else $USER).
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
    /// Answer the agent's question automatically instead of asking on the terminal.
    #[arg(long)]
    pub yes: bool,
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
    /// Budget raises: needed to go on when a budget is spent.
    #[command(flatten)]
    pub raise: RaiseArgs,
    /// Apply tether.toml's configuration to the run where it differs from the one the run
    /// recorded (the difference is shown first); without it such a resume is refused (on a
    /// terminal you are asked).
    #[arg(long)]
    pub accept_config: bool,
    /// Also write every event to stdout.
    #[arg(long, value_name = "FORMAT")]
    pub events: Option<EventsFormat>,
}

/// Options of `tether init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing tether.toml (an existing plan.md is always kept).
    #[arg(long)]
    pub force: bool,
    /// Write a short working tether.toml for this agent: its [executor], a [judge] of another
    /// vendor, the terminal's channels, each line commented (acp takes the agent's PROGRAM).
    #[arg(long, value_name = "AGENT", conflicts_with = "full")]
    pub agent: Option<InitAgent>,
    /// With --agent acp: the agent's program, a name on PATH or a path.
    #[arg(
        value_name = "PROGRAM",
        requires = "agent",
        required_if_eq("agent", "acp")
    )]
    pub program: Option<String>,
    /// Write the full reference instead: every table and key, commented (what `tether init`
    /// writes without --agent).
    #[arg(long)]
    pub full: bool,
}

/// The agents `tether init --agent` writes a working configuration for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InitAgent {
    /// Claude Code, judged by an OpenAI model (OPENAI_API_KEY).
    Claude,
    /// The Codex CLI, judged by an Anthropic model (ANTHROPIC_API_KEY).
    Codex,
    /// The pi coding agent, judged by an OpenAI model (OPENAI_API_KEY).
    Pi,
    /// tether's own agent on an Anthropic model (ANTHROPIC_API_KEY), judged by an OpenAI one
    /// (OPENAI_API_KEY).
    Builtin,
    /// Any agent speaking the Agent Client Protocol, by its PROGRAM, judged by an Anthropic
    /// model (ANTHROPIC_API_KEY), or an OpenAI one for a Claude adapter (OPENAI_API_KEY).
    Acp,
}

/// Options of `tether completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `--json` for reading commands.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Print JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// The tether binary to try as the MCP server (default: this one, which is what the loops
    /// give an agent CLI); e.g. the `tether` your own MCP configuration names.
    #[arg(long, value_name = "PATH")]
    pub tether: Option<PathBuf>,
}

/// Options of `tether report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run (default: the latest).
    pub run: Option<String>,
    /// Print `{"path", "markdown"}` as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `tether judge …`.
#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Run the configured [judge] on the built-in corpus (and your own cases): per case and in
    /// total, false accepts, false rejects, model calls, tokens, cost and time.
    Test(JudgeTestArgs),
}

/// Options of `tether judge test`.
#[derive(Debug, Args)]
pub struct JudgeTestArgs {
    /// Print the results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also run the `*.case` files of this directory (the format is in the book's "Measuring your
    /// judge" chapter).
    #[arg(long, value_name = "DIR")]
    pub cases: Option<std::path::PathBuf>,
    /// Run only the cases whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
}

/// `tether store …`.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copy this workspace's history (.tether/tether.db: runs, their journals, questions,
    /// verdicts, contract approvals) into the team store. Running it again adds only what is
    /// new.
    Push(StorePushArgs),
}

/// `tether worktree` and its subcommands.
#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// Each run's worktree in this repository: run, branch, directory, and whether the run is
    /// being driven now.
    List(WorktreeListArgs),
    /// Remove a run's worktree; its branch tether/<run> stays. Refused while the run is driven.
    Remove(WorktreeRemoveArgs),
}

/// Options of `tether worktree list`.
#[derive(Debug, Args)]
pub struct WorktreeListArgs {
    /// Print the list as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether worktree remove`.
#[derive(Debug, Args)]
pub struct WorktreeRemoveArgs {
    /// The run whose worktree goes.
    pub run: String,
}

/// Options of `tether store push`.
#[derive(Debug, Args)]
pub struct StorePushArgs {
    /// The team store (postgres://user@host:port/database; default: $TETHER_STORE_URL, else
    /// `[store] url`). The password comes from PGPASSWORD or ~/.pgpass.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Print what was copied as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `tether goal …`.
#[derive(Debug, Subcommand)]
pub enum GoalCommand {
    /// Sign a goal off: run its verify command, then ask the judge; on accept the goal becomes
    /// done. Exits 0 on accept, 1 on reject, 2 when refused (e.g. contract not approved).
    Complete(GoalCompleteArgs),
    /// Cancel an open or active goal, logging the reason in the plan.
    Cancel(GoalCancelArgs),
    /// Add an acceptance criterion to a goal's done_when, mid-run: logged in the plan, and the
    /// changed contract approved again as you, so the goal is signed off only when it holds too.
    AddCriterion(GoalAddCriterionArgs),
}

/// Options of `tether goal add-criterion`.
#[derive(Debug, Args)]
pub struct GoalAddCriterionArgs {
    /// The goal's id.
    pub id: String,
    /// What must also be true for the goal to be done.
    pub criterion: String,
}

/// Options of `tether goal complete`.
#[derive(Debug, Args)]
pub struct GoalCompleteArgs {
    /// The goal's id (`tether plan` shows them).
    pub id: String,
    /// Why the goal is done: what was done and how it was checked (given to the judge).
    #[arg(long, value_name = "TEXT")]
    pub evidence: Option<String>,
    /// A file that shows it (repeatable), relative to the workspace root.
    #[arg(long = "path", value_name = "P")]
    pub paths: Vec<String>,
    /// Sign off on the verify command alone, without a judge (recorded as such).
    #[arg(long)]
    pub no_judge: bool,
    /// Print the outcome as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Options of `tether goal cancel`.
#[derive(Debug, Args)]
pub struct GoalCancelArgs {
    /// The goal's id.
    pub id: String,
    /// Why it is cancelled (logged in the plan).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

#[cfg(test)]
#[path = "reference_tests.rs"]
mod reference_tests;

/// `tether schedule …`.
#[derive(Debug, Subcommand)]
pub enum ScheduleCommand {
    /// Add a schedule: when it fires (--every or --cron) and what each fire runs (--goal or
    /// --ralph with --completion-promise). Its first fire is one interval (or the cron's next
    /// time) from now.
    Add(ScheduleAddArgs),
    /// Every schedule of this workspace: when it fires next, how its last fire ended, its
    /// failures in a row, whether it is paused or overdue.
    List(ScheduleListArgs),
    /// Remove a schedule (a run it started goes on to its end).
    Remove(ScheduleNameArg),
    /// Pause a schedule: it does not fire until resumed.
    Pause(ScheduleNameArg),
    /// Resume a paused schedule, its failures forgotten: it fires at once when one of its times
    /// passed while it was paused (one catch-up run), else at its next time.
    Resume(ScheduleNameArg),
    /// The scheduler, in the foreground: fires each schedule as it falls due, until Ctrl+C or
    /// SIGTERM (which stop its runs after their current step, resumable).
    Run,
    /// Print a systemd user unit that keeps `tether schedule run` going here (or, with
    /// --crontab, a crontab line starting it at boot).
    Install(ScheduleInstallArgs),
}

/// Options of `tether schedule add`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("when").required(true).args(["every", "cron"]))]
#[command(group = clap::ArgGroup::new("what").required(true).args(["goal", "ralph"]))]
pub struct ScheduleAddArgs {
    /// The schedule's name: letters, digits, `-` and `_`.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// Fire every DURATION (45s, 90m, 2h, 1h30m, 2d; 366d at most).
    #[arg(long, value_name = "DURATION")]
    pub every: Option<String>,
    /// Fire at the times a cron expression names, in UTC ("0 9 * * 1-5": 09:00 on weekdays).
    #[arg(long, value_name = "EXPR")]
    pub cron: Option<String>,
    /// Each fire is a goal run on this goal of the plan, done once it is signed off.
    #[arg(long, value_name = "ID")]
    pub goal: Option<String>,
    /// Each fire is a Ralph run of this prompt, done once the agent keeps its promise.
    #[arg(long, value_name = "PROMPT", requires = "completion_promise")]
    pub ralph: Option<String>,
    /// The word a Ralph fire's agent says (`<promise>WORD</promise>`) when it is done.
    #[arg(long, value_name = "WORD", requires = "ralph")]
    pub completion_promise: Option<String>,
    /// Each fire's iteration budget (default: `[loop] max_iterations`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20_000))]
    pub max_iterations: Option<u32>,
    /// Each fire works in a git worktree of its own, on a branch tether/<run>.
    #[arg(long)]
    pub worktree: bool,
}

/// Options of `tether schedule list`.
#[derive(Debug, Args)]
pub struct ScheduleListArgs {
    /// Print the schedules as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// A schedule, by name.
#[derive(Debug, Args)]
pub struct ScheduleNameArg {
    /// The schedule's name.
    pub name: String,
}

/// Options of `tether schedule install`.
#[derive(Debug, Args)]
pub struct ScheduleInstallArgs {
    /// Print a crontab line starting the scheduler at boot instead of a systemd user unit.
    #[arg(long)]
    pub crontab: bool,
}
