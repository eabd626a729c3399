//! The ways composing or driving a run fails, each saying whether a person must fix something
//! (a setting, an argument: [`Error::is_usage`]) or tether failed.

use tether_config::ConfigError;
use tether_core::looping::LoopError;
use tether_store::StoreError;

/// What went wrong composing or driving a run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read, written or made.
    #[error("{what}")]
    Io {
        /// What was being done (`creating /tmp/x`).
        what: String,
        /// The OS error.
        #[source]
        cause: std::io::Error,
    },
    /// The plan file could not be read or written.
    #[error("{what}")]
    PlanFile {
        /// What was being done.
        what: &'static str,
        /// Why.
        #[source]
        cause: tether_plan::file::PlanFileError,
    },
    /// Plan mode's MCP tools need the configuration.
    #[error("plan mode needs a tether.toml that loads")]
    DraftingNeedsConfig,
    /// Plan mode's drafting session cannot be read.
    #[error("reading the drafting session in {dir}")]
    Drafting {
        /// Its directory.
        dir: String,
        /// Why.
        #[source]
        cause: tether_plan::file::PlanFileError,
    },
    /// The workspace has no history of its own to push.
    #[error("no history to push: {0} does not exist")]
    NothingToPush(String),
    /// `tether judge test` without a `[judge]`.
    #[error(
        "tether judge test measures the [judge] of tether.toml, and there is none; add one \
         (api, base_url, model, api_key_env)"
    )]
    NoJudgeToTest,
    /// The built-in cases of the judge's test do not parse.
    #[error(transparent)]
    BuiltinCases(tether_judgebench::CaseError),
    /// The user's cases do not parse.
    #[error(transparent)]
    Cases(tether_judgebench::CaseError),
    /// `--only` leaves no case.
    #[error("no case matches --only")]
    NoCaseMatches,
    /// A case of the judge's test could not be run.
    #[error(transparent)]
    Case(Box<tether_judgebench::RunError>),
    /// The human desk's channels are not set up (each problem, said).
    #[error("{0}")]
    Desk(String),
    /// A hook's input is not JSON.
    #[error("the hook's input is not JSON")]
    HookNotJson(#[source] serde_json::Error),
    /// A hook's Bash call names no command.
    #[error("the Bash call has no tool_input.command")]
    HookWithoutCommand,
    /// A run of another machine is to be taken up here.
    #[error(
        "run {run} belongs to machine {machine} ({workspace}); resume it there: its workspace, \
         transcripts and agent are on that machine"
    )]
    OtherMachine {
        /// The run.
        run: String,
        /// Its machine.
        machine: String,
        /// Its workspace there.
        workspace: String,
    },
    /// A run of another workspace is to be taken up here.
    #[error(
        "run {run} works in {workspace}; resume it from there (tether -C {workspace} resume {run})"
    )]
    OtherWorkspace {
        /// The run.
        run: String,
        /// Its workspace.
        workspace: String,
    },
    /// A run a budget stopped is resumed without the raise it needs.
    #[error("run {run} stopped because {spent}; give it more with: {hint}")]
    NeedsRaise {
        /// The run.
        run: String,
        /// The budget spent.
        spent: String,
        /// The raise that lets it go on.
        hint: String,
    },
    /// A run a budget stopped is given more of another unit.
    #[error(
        "run {run} stopped because {spent}; raising another unit would not let it go on: {hint}"
    )]
    RaiseOtherUnit {
        /// The run.
        run: String,
        /// The budget spent.
        spent: String,
        /// The raise that lets it go on.
        hint: String,
    },
    /// A person's change of the plan cannot be made (the file, the goal, the line).
    #[error(transparent)]
    PlanChange(tether_plan::file::PlanFileError),
    /// A goal changed is no longer in the plan.
    #[error("goal `{0}` is no longer in the plan")]
    GoalGone(String),
    /// Plan mode's plan does not parse.
    #[error("plan mode starts from a plan that parses")]
    PlanToDraftFrom(#[source] tether_plan::file::PlanFileError),
    /// tether.toml (or the variable it names) is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `[store]` (or `TETHER_STORE_URL`) cannot be read.
    #[error("finding the store")]
    FindStore(#[source] ConfigError),
    /// The store could not be opened.
    #[error("opening {place}")]
    OpenStore {
        /// Where it is (a path, or a database without its password).
        place: String,
        /// Why.
        #[source]
        cause: StoreError,
    },
    /// A store URL names no kind of store tether knows.
    #[error("{0} names no store tether knows (postgres://…)")]
    UnknownStore(String),
    /// The team store's URL cannot be used.
    #[error(transparent)]
    StoreUrl(#[from] tether_store_pg::UrlError),
    /// The team store could not be reached.
    #[error("connecting to {url}")]
    ConnectTeam {
        /// Its URL, without a password.
        url: String,
        /// Why.
        #[source]
        cause: tether_store_pg::PgStoreError,
    },
    /// A run could not be found or steered.
    #[error(transparent)]
    Control(#[from] tether_store::control::ControlError),
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The kernel cannot enforce the sandbox `[sandbox]` asks for.
    #[error(transparent)]
    Sandbox(#[from] tether_sandbox::SandboxError),
    /// `[sandbox] readable` or `writable` names `/` or the home directory.
    #[error(transparent)]
    SandboxGrant(#[from] crate::compose::sandbox::GrantError),
    /// `[executor] kind = "acp"` without a program.
    #[error("[executor] kind = \"acp\" needs program: the ACP agent to run")]
    AcpNeedsProgram,
    /// The executor kind is not one of the registered agent CLIs.
    #[error("executor kind `{0}` is not an agent CLI tether runs")]
    NotAnAgentCli(&'static str),
    /// The built-in agent has no `[model]`.
    #[error(
        "the built-in agent needs a model: add a [model] table to tether.toml (api, base_url, \
         model, api_key_env), or run `tether demo` to see it with a scripted one"
    )]
    BuiltinNeedsModel,
    /// Plan mode's built-in agent has no model.
    #[error(
        "plan mode drafts goals with the built-in agent, which needs a model: add a [model] (or \
         [planning]) table to tether.toml (api, base_url, model, api_key_env); or write goals \
         into the plan by hand and lock them with `tether plan approve`"
    )]
    PlanningNeedsModel,
    /// `--model` given to plan mode when an external agent drafts.
    #[error(
        "--model picks the built-in agent's model; with [executor] kind = \"{kind}\" plan mode \
         drafts with {with}"
    )]
    ModelFlagForAgent {
        /// The executor kind.
        kind: &'static str,
        /// What drafts instead.
        with: &'static str,
    },
    /// The model client could not be set up.
    #[error("setting up the model client")]
    ModelClient(#[source] tether_model::ModelError),
    /// The judge (or the sign-off) could not be set up from `[judge]`.
    #[error(transparent)]
    Judge(#[from] tether_signoff::JudgeSetupError),
    /// The agent's tools could not be set up.
    #[error(transparent)]
    Tools(#[from] tether_tools::SetupError),
    /// Plan mode could not be set up.
    #[error(transparent)]
    Planning(#[from] tether_core::planning::PlanningError),
    /// The run's worktree could not be made or found again.
    #[error(transparent)]
    Worktree(#[from] tether_worktree::WorktreeError),
    /// The repository's worktrees could not be listed.
    #[error(transparent)]
    ListWorktrees(tether_worktree::WorktreeError),
    /// The files a run's worktree starts with could not be put there.
    #[error("{what}")]
    WorktreeFile {
        /// What was being done.
        what: String,
        /// The OS error.
        #[source]
        cause: std::io::Error,
    },
    /// The run's configuration file (or a variable that configures) differs from the
    /// configuration the run recorded: only a person who saw the difference and accepts it
    /// resumes the run (or one who puts the file back).
    #[error(
        "tether.toml differs from the configuration run {run} recorded ({changes}): look at the \
         difference, then resume with `tether resume {run} --accept-config` to apply it, or put \
         tether.toml back and resume with `tether resume {run}`"
    )]
    ConfigChanged {
        /// The differences, each `setting: old → new`, `; `-separated.
        changes: String,
        /// The run.
        run: String,
    },
    /// The loop refused to start or resume, or its store failed.
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// A schedule cannot be added, found or changed.
    #[error(transparent)]
    Schedule(#[from] crate::compose::scheduler::ScheduleError),
    /// The run's task ended without an end (it panicked, or its runtime shut down).
    #[error("the run's task ended abnormally: {0}")]
    Task(String),
    /// A goal's own run of a run of many goals is not resumed alone (its branch keeps the work
    /// it committed).
    #[error(
        "run {run} worked on one goal of a run of many goals (tether run --parallel), which is \
         not resumed goal by goal: resume the run of many goals (`tether resume <its id>`, the id \
         `run of many goals r-…` named), which resumes this run in its worktree"
    )]
    GoalOfFleet {
        /// The run.
        run: String,
    },
    /// Workers work on a run of many goals whose workspace is its repository's root.
    #[error(
        "--workers needs the workspace to be the repository's root ({workspace} is inside it): \
         the workers read the plan and tether.toml at the root of the run's branch"
    )]
    WorkersNeedRoot {
        /// The workspace.
        workspace: String,
    },
    /// The repository has no remote of that name for the workers of a run of many goals.
    #[error(
        "the repository has no remote `{name}` for the workers to fetch from and push to; add it \
         (git remote add {name} <url>) or give --remote a URL"
    )]
    NoRemote {
        /// The remote's name.
        name: String,
    },
    /// git could not exchange with the repository's shared remote (a worker's clone, fetch or
    /// push): check that this machine reaches the remote and may push to it.
    #[error("`git {what}` with the repository's shared remote failed: {stderr}")]
    Remote {
        /// The exchange (`clone`, `fetch`, `push`).
        what: String,
        /// The end of git's error output.
        stderr: String,
    },
    /// git did not answer (could not start, did not finish) while exchanging with the shared
    /// remote.
    #[error(transparent)]
    Git(#[from] tether_git::GitError),
    /// The run of many goals merged every goal already: there is nothing to take up; its
    /// branch holds the work.
    #[error("run {run} merged every goal into {branch} already: there is nothing to take up")]
    FleetDone {
        /// The run of many goals.
        run: String,
        /// Its integration branch.
        branch: String,
    },
    /// A run of many goals works in git worktrees of the workspace's repository, which has
    /// none, or no commit to branch from.
    #[error(
        "--parallel works on each goal in a git worktree of the repository: {detail}; give it a \
         first commit (git init if it is none, then git add -A && git commit), or run without \
         --parallel"
    )]
    FleetNeedsRepository {
        /// What git found.
        detail: String,
    },
    /// A run of many goals (`--parallel`) is a goal run: it cannot be made from another kind.
    #[error("only a goal run (`tether run`) works on many goals at once")]
    FleetOfGoals,
    /// The plan a run of many goals works on cannot be read.
    #[error("reading the plan for a run of many goals: {0}")]
    FleetPlan(#[source] tether_plan::PlanFileError),
    /// An act only a person may do was asked for from inside an agent's process tree: the
    /// message names the act and what a person, in their own shell, does instead (and what the
    /// agent may do: ask with ask_human, pause its run).
    #[error(transparent)]
    NotAHuman(#[from] tether_core::human_act::NotAHuman),
    /// This binary cannot be found (to serve an agent's MCP tools).
    #[error("finding the tether binary to serve {whose} MCP tools")]
    CurrentExe {
        /// Whose (`Claude Code's`).
        whose: String,
        /// Why.
        #[source]
        cause: std::io::Error,
    },
}

impl Error {
    /// An [`Error::Io`] doing `what`.
    pub fn io(what: impl Into<String>, cause: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            cause,
        }
    }

    /// An [`Error::Io`] creating `path`.
    pub fn creating(path: &std::path::Path, cause: std::io::Error) -> Self {
        Error::io(format!("creating {}", path.display()), cause)
    }

    /// Whether a person must fix something (a setting, an argument, the run asked for) rather
    /// than tether having failed: the CLI exits 2 for these.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Config(_)
            | Error::FleetOfGoals
            | Error::FleetNeedsRepository { .. }
            | Error::GoalOfFleet { .. }
            | Error::FleetDone { .. }
            | Error::NoRemote { .. }
            | Error::WorkersNeedRoot { .. }
            | Error::FindStore(_)
            | Error::UnknownStore(_)
            | Error::ConfigChanged { .. }
            | Error::Sandbox(_)
            | Error::SandboxGrant(_)
            | Error::AcpNeedsProgram
            | Error::NotAnAgentCli(_)
            | Error::BuiltinNeedsModel
            | Error::PlanningNeedsModel
            | Error::ModelFlagForAgent { .. }
            | Error::ModelClient(_)
            | Error::Judge(_)
            | Error::Worktree(_)
            | Error::WorktreeFile { .. }
            | Error::Desk(_)
            | Error::NothingToPush(_)
            | Error::NoJudgeToTest
            | Error::Cases(_)
            | Error::NoCaseMatches
            | Error::PlanToDraftFrom(_)
            | Error::NeedsRaise { .. }
            | Error::OtherMachine { .. }
            | Error::PlanChange(_)
            | Error::GoalGone(_)
            | Error::OtherWorkspace { .. }
            | Error::RaiseOtherUnit { .. }
            | Error::NotAHuman(_) => true,
            Error::Planning(e) => e.is_usage(),
            Error::Schedule(e) => e.is_usage(),
            Error::Control(e) => !matches!(e, tether_store::control::ControlError::Store(_)),
            // Asking for something that cannot be done (the run ended, another process drives
            // it, the plan needs fixing) is a usage error, not a failure of tether.
            Error::Loop(e) => !matches!(e, LoopError::Store(_)),
            Error::Io { .. }
            | Error::PlanFile { .. }
            | Error::DraftingNeedsConfig
            | Error::HookNotJson(_)
            | Error::HookWithoutCommand
            | Error::Drafting { .. }
            | Error::OpenStore { .. }
            | Error::StoreUrl(_)
            | Error::ConnectTeam { .. }
            | Error::Store(_)
            | Error::Tools(_)
            | Error::CurrentExe { .. }
            | Error::Task(_)
            | Error::FleetPlan(_)
            | Error::Remote { .. }
            | Error::Git(_)
            | Error::ListWorktrees(_)
            | Error::BuiltinCases(_)
            | Error::Case(_) => false,
        }
    }
}

/// `e` and its causes, as `{:#}` of an `anyhow::Error` shows them: for messages that quote
/// an error whole.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        out.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    out
}

/// The runtime's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_person_must_fix_is_usage_and_what_failed_is_not() {
        for usage in [
            Error::AcpNeedsProgram,
            Error::BuiltinNeedsModel,
            Error::Desk("Zulip is not configured".into()),
            Error::NothingToPush("x".into()),
            Error::NoJudgeToTest,
            Error::NoCaseMatches,
            Error::UnknownStore("mysql://db".into()),
            Error::Loop(LoopError::PlanInvalid("line 3".into())),
        ] {
            assert!(usage.is_usage(), "{usage}");
        }
        for failure in [
            Error::io("creating /x", std::io::Error::other("disk on fire")),
            Error::Task("panicked".into()),
            Error::DraftingNeedsConfig,
            Error::Loop(LoopError::Store(StoreError::Io {
                path: "/x".into(),
                cause: std::io::Error::other("disk on fire"),
            })),
        ] {
            assert!(!failure.is_usage(), "{failure}");
        }
    }
}
