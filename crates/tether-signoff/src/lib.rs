//! Signing a goal off: the one blessed path to `status: done` (`complete_goal`), and
//! `cancel_goal`.
//!
//! An agent's "done" is a claim. [`Signoff::complete`] turns it into a decision in stages:
//!
//! 0. **Contract.** The goal is read from the plan; it must be `open` or `active`, and its
//!    contract (`done_when`, `verify`, `failure_modes`, `ask_before`) must be the one a human
//!    approved (the hash in the store). Otherwise the attempt is *refused* and nothing runs.
//!    Then the attempt number is reserved in the store: one sign-off of a goal runs at a time,
//!    and a second one meanwhile is refused, naming the attempt that runs.
//! 1. **Verify.** The goal's `verify` command runs in the workspace ([`verify`]); a non-zero exit
//!    or a timeout rejects the attempt at once, without a model call.
//! 2. **Judge.** One session with an independent model ([`Judge`]) that reads the workspace with
//!    read-only tools and must end with a verdict whose quotes tether checks against the files
//!    ([`verdict`], [`quotes`]: a quote counts when it is whole lines of a project file and shows
//!    this work — a line the run changed, or a specific one). A judge that fails in any way is a
//!    reject (*fail closed*), flagged as `judge_unavailable`.
//!
//! Every accept or reject is recorded in the store with its kind
//! ([`tether_store::VerdictKind`]: accepted, verify failed, judge rejected, judge unavailable —
//! what the goal loop's rules read) and the judge's transcript (under `.tether/runs/<run>/`, or
//! `.tether/signoff/` outside a run), and logged in the plan; an accept
//! also patches the goal's status to `done`. The agent calls this through the `complete_goal`
//! and `cancel_goal` tools ([`tool`]); a person through `tether goal complete` / `cancel`. The
//! agent's cancel waits for a person to confirm it ([`Signoff::cancel_goal_by_person`]).
//! Every text the judge reads, and the tools' results, are in [`prompts`].

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod backed;
mod cancel;
pub mod changed;
pub mod common;
mod complete;
mod diff;
mod error;
pub mod judge;
mod outcome;
pub mod panel;
mod person;
pub mod prompts;
pub mod quotes;
mod record;
mod ruling;
pub mod specific;
mod steps;
pub mod surface;
pub mod tool;
mod unchanged;
pub mod verdict;
pub mod verify;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_config::{Config, Env};
use tether_store::RunId;

pub use complete::NO_JUDGE_REASON;
pub use error::{JudgeSetupError, SignoffError};
pub use judge::Judge;
pub use outcome::{CancelOutcome, SignoffOutcome};
pub use panel::Panel;
pub use record::stamp;
pub use verdict::Check;
pub use verify::VerifyResult;

use tether_config::Workspace;
use tether_store::Journal;

/// The default timeout of a verify command (`[loop] verify_timeout_secs`).
pub const DEFAULT_VERIFY_TIMEOUT: Duration = Duration::from_secs(600);

/// Signs goals off (and cancels them) in one workspace. Cheap to clone.
#[derive(Clone)]
pub struct Signoff {
    ws: Workspace,
    journal: Journal,
    plan: PathBuf,
    judge: Option<Panel>,
    verify_timeout: Duration,
    run: Option<RunId>,
    /// Variables removed from the environment of verify and git: tether's own keys.
    env_remove: Vec<String>,
    sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    /// The same with the network open, for the verify of a goal that opens it.
    sandbox_network: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    /// Where tether's git (what the work changed) runs.
    git: tether_git::Confinement,
    /// What the workspace is compared with, when given (else the run's start).
    since: Option<tether_git::Start>,
}

impl std::fmt::Debug for Signoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signoff")
            .field("root", &self.ws.root())
            .field("plan", &self.plan)
            .field("judge", &self.judge)
            .field("verify_timeout", &self.verify_timeout)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl Signoff {
    /// Sign-off for the plan file `plan` (absolute, or relative to the workspace root), with no
    /// judge (verify alone, as `--no-judge`) until [`Signoff::with_judge`], the default verify
    /// timeout, and no run.
    pub fn new(ws: Workspace, journal: Journal, plan: impl AsRef<Path>) -> Self {
        let plan = ws.root().join(plan);
        Signoff {
            ws,
            journal,
            plan,
            judge: None,
            verify_timeout: DEFAULT_VERIFY_TIMEOUT,
            run: None,
            env_remove: Vec::new(),
            sandbox: None,
            sandbox_network: None,
            git: tether_git::Confinement::default(),
            since: None,
        }
    }

    /// Sign-off as `tether.toml` configures it: its plan file, `[loop] verify_timeout_secs`, and
    /// the `[judge]` — refused when there is none unless `no_judge` (which also skips a
    /// configured one: sign-off by verify alone, recorded as such).
    pub fn from_config(
        ws: Workspace,
        journal: Journal,
        config: &Config,
        env: &dyn Env,
        no_judge: bool,
    ) -> Result<Self, JudgeSetupError> {
        let judge = match (&config.judge, no_judge) {
            (_, true) => None,
            (None, false) => return Err(JudgeSetupError::NotConfigured),
            (Some(judge), false) => Some(Panel::from_config(judge, config.model.as_ref(), env)?),
        };
        let plan = config.plan_path(ws.root());
        Ok(Signoff::new(ws, journal, plan)
            .with_panel(judge)
            .with_verify_timeout(Duration::from_secs(config.r#loop.verify_timeout_secs))
            .without_env(config.key_vars())
            .with_git(git_confinement(config)))
    }

    /// Judges with `judge` alone; `None` signs off by verify alone (`--no-judge`).
    #[must_use]
    pub fn with_judge(self, judge: Option<Judge>) -> Self {
        self.with_panel(judge.map(Panel::one))
    }

    /// Judges with the judges of `panel`; `None` signs off by verify alone (`--no-judge`).
    #[must_use]
    pub fn with_panel(mut self, panel: Option<Panel>) -> Self {
        self.judge = panel;
        self
    }

    /// Sets the verify command's timeout.
    #[must_use]
    pub fn with_verify_timeout(mut self, timeout: Duration) -> Self {
        self.verify_timeout = timeout;
        self
    }

    /// Runs verify (and git, for the judge's diff) without the environment variables `vars`:
    /// tether's own keys, which a verify command — code the agent wrote — could otherwise print
    /// into its log, the tool result and the next model request.
    #[must_use]
    pub fn without_env(mut self, vars: Vec<String>) -> Self {
        self.env_remove = vars;
        self
    }

    /// Runs verify commands (code the agent may have written) in `sandbox`.
    #[must_use]
    pub fn sandboxed(mut self, sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Runs the verify of a goal with `network: on` in `sandbox` (the network open).
    #[must_use]
    pub fn with_network_sandbox(
        mut self,
        sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    ) -> Self {
        self.sandbox_network = sandbox;
        self
    }

    /// Files attempts under `run` (verdicts, logs in `.tether/runs/<run>/`).
    #[must_use]
    pub fn with_run(mut self, run: Option<RunId>) -> Self {
        self.run = run;
        self
    }

    /// Runs tether's git (what the work changed) as `git` says: in a sandbox of its own by
    /// default, outside any only when the run's sandbox is off ([`git_confinement`]).
    #[must_use]
    pub fn with_git(mut self, git: tether_git::Confinement) -> Self {
        self.git = git;
        self
    }

    /// Compares the workspace with `start` (a snapshot taken beforehand) instead of the start
    /// of the run: for a workspace prepared outside any run (`tether judge test`'s cases).
    #[must_use]
    pub fn since(mut self, start: tether_git::Start) -> Self {
        self.since = Some(start);
        self
    }

    /// What the workspace is compared with: the start given ([`Signoff::since`]); else the
    /// snapshot the run recorded when it began (never a repository found in the tree: the agent
    /// may have made one); outside a run, the start of the latest run of this workspace made on
    /// this machine, when there is one.
    fn baseline(&self) -> diff::Baseline {
        if let Some(start) = &self.since {
            return diff::Baseline {
                start: start.clone(),
                run: None,
            };
        }
        let store = self.journal.store();
        let run = match &self.run {
            Some(run) => store.run(run).map(Some),
            None => store.runs(LATEST_RUNS).map(|runs| {
                runs.into_iter().find(|r| {
                    r.workspace == self.ws.root() && !tether_store::control::is_elsewhere(r)
                })
            }),
        };
        match run {
            Ok(Some(run)) => diff::Baseline {
                start: tether_git::Start::of_spec(&run.spec),
                run: Some(run.id),
            },
            Ok(None) => diff::Baseline {
                start: tether_git::Start::Failed("no run of this workspace began here".to_owned()),
                run: None,
            },
            Err(e) => {
                tracing::warn!(run = ?self.run, error = %e, "could not read the run's start from the store");
                diff::Baseline {
                    start: tether_git::Start::Failed(format!("the store could not be read: {e}")),
                    run: self.run.clone(),
                }
            }
        }
    }

    /// What the work changed since the baseline, for this attempt.
    async fn work_tree(&self, cancel: &tokio_util::sync::CancellationToken) -> diff::WorkTree {
        let baseline = self.baseline();
        diff::collect(&self.ws, &baseline, (self.git, &self.env_remove), cancel).await
    }

    /// The first judge (`[judge]`), if any.
    pub fn judge(&self) -> Option<&Judge> {
        self.judge.as_ref().map(Panel::first)
    }

    /// The judges, if any.
    pub fn panel(&self) -> Option<&Panel> {
        self.judge.as_ref()
    }

    /// The plan file.
    pub fn plan_path(&self) -> &Path {
        &self.plan
    }

    /// The plan file as the store names it (see [`plan_key`]).
    pub fn plan_key(&self) -> String {
        plan_key(&self.ws, &self.plan)
    }

    /// Where this attempt's files go: `.tether/runs/<run>/`, or `.tether/signoff/` outside a
    /// run.
    fn files_dir(&self) -> PathBuf {
        match &self.run {
            Some(run) => self.ws.runs_dir().join(run.to_string()),
            None => self.ws.state_dir().join("signoff"),
        }
    }
}

/// How many of the latest runs are looked through, outside a run, for this workspace's.
const LATEST_RUNS: usize = 50;

/// Where tether's git runs for `config`: in a sandbox of its own, or outside any when the
/// person turned the sandbox off (`[sandbox] mode = "off"`: the agent has every power of theirs
/// already; git still reads only tether's configuration).
pub fn git_confinement(config: &Config) -> tether_git::Confinement {
    match config.sandbox.mode {
        tether_config::SandboxMode::Off => tether_git::Confinement::Unconfined,
        tether_config::SandboxMode::Enforce => tether_git::Confinement::Sandboxed,
    }
}

/// The plan file's name in the store (approvals, verdicts): its path relative to the workspace
/// root (`plan.md`), or as given when outside it.
pub fn plan_key(ws: &Workspace, plan: &Path) -> String {
    ws.display(plan).into_owned()
}
