//! Acts only a person may do, refused when an agent asks for them.
//!
//! tether's promise rests on a few decisions no agent may take for itself: agreeing to a goal's
//! contract, signing a goal off without the judge, cancelling a goal or a run, answering a question,
//! resuming a run a rule paused for a person, applying a changed tether.toml to a run, putting
//! work on a schedule or running the scheduler. The agent has a shell and runs as the same user, so
//! it can start the tether binary itself; these commands therefore check, in one place
//! ([`require_human`]), that they do not run inside an agent's process tree:
//!
//! - **the mark**: every process tether starts carries [`AGENT_MARK`] in its environment, and
//!   their children inherit it;
//! - **the ancestry**: the parents of this process (from `/proc`) must not include a live
//!   process driving a run of this workspace — one holding a run's lock, as the kernel's lock
//!   table or the pid recorded in the lock says. The driver is a child subreaper
//!   ([`crate::subreaper`]), so a descendant that double-forks stays in its tree.
//!
//! While a run of the workspace is being driven, the command must also be able to **see** its
//! driver: a process in a PID namespace of its own (`unshare -p`), or one that mounted something
//! over `/proc`, cannot walk its real ancestry, so it is refused rather than trusted
//! ([`Inside::Unverifiable`], [`Inside::DriverHidden`]). A person's shell sees the loop it started.
//!
//! Any one of these refuses, and the refusal says what the person should do instead. None is a
//! sandbox: a process of the same user that clears its environment and escapes the tree (or
//! outlives the run) is not caught; see the README's security section.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, File};
use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;

use tether_config::{Env, Workspace};
use tether_tools::process;

use crate::run_lock::RunLock;

pub use tether_tools::process::AGENT_MARK;

/// The most run directories looked at for live drivers.
const MAX_RUNS: usize = 100_000;

/// The most bytes of `/proc/locks` read.
const MAX_LOCKS: u64 = 4 << 20;

/// Something only a person may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HumanAct {
    /// Approving goals' contracts (`tether plan approve`, `tether run --approve`, plan mode's
    /// Ready).
    ApproveContracts,
    /// Signing a goal off by verify alone (`tether goal complete --no-judge`).
    SignOffWithoutJudge,
    /// Starting a goal run whose sign-offs skip the judge (`tether run --no-judge`).
    RunWithoutJudge,
    /// Cancelling a goal (`tether goal cancel`).
    CancelGoal,
    /// Cancelling a run (`tether cancel`): it ends for good, its goals left as they are.
    CancelRun,
    /// Answering a question (`tether answer`).
    AnswerQuestion,
    /// Taking a stopped run up again (`tether resume`).
    ResumeRun,
    /// Adding an acceptance criterion to a goal, which re-approves its contract
    /// (`tether goal add-criterion`).
    AddCriterion,
    /// Raising a run's or a goal's budget (`tether resume --add-tokens …`).
    RaiseBudget,
    /// Applying a changed tether.toml's configuration to a run (`tether resume
    /// --accept-config`).
    AcceptConfig,
    /// Serving the dashboard (`tether serve`), whose holder answers questions and starts,
    /// resumes, pauses and cancels runs.
    ServeDashboard,
    /// Asking a question about a run on the side (`tether side`), whose model calls are not
    /// charged to the run's budget.
    AskOnTheSide,
    /// Watching the runs in the terminal (`tether watch`), whose holder answers questions and
    /// pauses, cancels and speaks to runs.
    WatchRuns,
    /// Adding a schedule (`tether schedule add`): each of its fires starts a run with a fresh
    /// budget.
    AddSchedule,
    /// Removing a schedule (`tether schedule remove`).
    RemoveSchedule,
    /// Resuming a paused schedule (`tether schedule resume`), perhaps one its failures paused.
    ResumeSchedule,
    /// Running the scheduler (`tether schedule run`), which starts runs as the schedules say.
    RunScheduler,
    /// Printing the unit that keeps the scheduler running (`tether schedule install`).
    InstallScheduler,
}

impl HumanAct {
    /// What the act is, as a refusal names it.
    pub fn what(self) -> &'static str {
        match self {
            HumanAct::ApproveContracts => "approving a goal's contract",
            HumanAct::SignOffWithoutJudge => "signing a goal off without the judge (--no-judge)",
            HumanAct::RunWithoutJudge => "starting a goal run without the judge (--no-judge)",
            HumanAct::CancelGoal => "cancelling a goal",
            HumanAct::CancelRun => "cancelling a run",
            HumanAct::AnswerQuestion => "answering a question",
            HumanAct::ResumeRun => "resuming a run",
            HumanAct::AddCriterion => "adding an acceptance criterion to a goal",
            HumanAct::RaiseBudget => "raising a budget",
            HumanAct::AcceptConfig => "applying changed settings to a run (--accept-config)",
            HumanAct::ServeDashboard => "serving the dashboard (tether serve)",
            HumanAct::AskOnTheSide => "asking about a run on the side (tether side)",
            HumanAct::WatchRuns => "watching the runs in the terminal (tether watch)",
            HumanAct::AddSchedule => "adding a schedule (tether schedule add)",
            HumanAct::RemoveSchedule => "removing a schedule (tether schedule remove)",
            HumanAct::ResumeSchedule => "resuming a schedule (tether schedule resume)",
            HumanAct::RunScheduler => "running the scheduler (tether schedule run)",
            HumanAct::InstallScheduler => {
                "installing the scheduler's service (tether schedule install)"
            }
        }
    }

    /// What to do instead, for the person and for the agent reading the refusal.
    pub fn instead(self) -> &'static str {
        match self {
            HumanAct::ApproveContracts => {
                "A person approves contracts by running `tether plan approve` in their own \
                 shell, outside the agent. An agent that needs a contract changed asks with \
                 ask_human."
            }
            HumanAct::SignOffWithoutJudge | HumanAct::RunWithoutJudge => {
                "Goals are signed off by verify and the judge: run `tether goal complete <id>` \
                 without --no-judge. Only a person, in their own shell outside the agent, may \
                 skip the judge."
            }
            HumanAct::CancelGoal => {
                "A person cancels a goal by running `tether goal cancel <id>` in their own \
                 shell, outside the agent. An agent that thinks a goal should be dropped says \
                 why with ask_human."
            }
            HumanAct::CancelRun => {
                "A person cancels a run by running `tether cancel` in their own shell, outside \
                 the agent. An agent that cannot go on pauses its run with `tether pause` (a \
                 person then resumes or cancels it) or says why with ask_human."
            }
            HumanAct::AnswerQuestion => {
                "The question waits for a person: they answer it with `tether answer` in their \
                 own shell, on the terminal or on Zulip."
            }
            HumanAct::ResumeRun => {
                "A person resumes a run with `tether resume` in their own shell, outside the \
                 agent."
            }
            HumanAct::AddCriterion => {
                "A person adds a criterion with `tether goal add-criterion` in their own shell, \
                 outside the agent. An agent that thinks a goal's contract is missing something \
                 says so with ask_human."
            }
            HumanAct::RaiseBudget => {
                "A person raises a budget with `tether resume <run> --add-tokens …` (or \
                 --add-cost, --add-time, --add-iterations) in their own shell, outside the \
                 agent. An agent that needs more budget says why with ask_human."
            }
            HumanAct::AcceptConfig => {
                "A person applies a changed tether.toml to a run with `tether resume <run> \
                 --accept-config` in their own shell, outside the agent. An agent that needs a \
                 setting changed (the network, a directory it may write) asks with ask_human."
            }
            HumanAct::ServeDashboard => {
                "A person serves the dashboard with `tether serve` in their own shell, outside \
                 the agent: it answers questions and starts and resumes runs. The run's own \
                 dashboard already shows what the agent does."
            }
            HumanAct::WatchRuns => {
                "A person watches the runs with `tether watch` in their own terminal, outside \
                 the agent: it answers questions, pauses and cancels runs and raises their \
                 budgets. An agent reads \
                 where its own run stands with `tether status`."
            }
            HumanAct::AskOnTheSide => {
                "A person asks about a run on the side with `tether side` in their own shell, \
                 outside the agent: its model calls are not charged to the run. An agent reads \
                 the repository itself, or asks a person with ask_human."
            }
            HumanAct::AddSchedule
            | HumanAct::RemoveSchedule
            | HumanAct::ResumeSchedule
            | HumanAct::RunScheduler
            | HumanAct::InstallScheduler => {
                "A person adds, removes and resumes schedules and runs the scheduler with \
                 `tether schedule` in their own shell, outside the agent: each fire starts a \
                 run with a fresh budget. An agent may read them with `tether schedule list` \
                 and stop one with `tether schedule pause`; one that wants a schedule changed \
                 asks with ask_human."
            }
        }
    }
}

/// Why this process counts as the agent's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inside {
    /// [`AGENT_MARK`] is set (to the pid of the tether process that started the tree).
    Marked {
        /// The mark's value.
        by: String,
    },
    /// An ancestor drives a run of this workspace.
    Ancestor {
        /// The ancestor.
        pid: u32,
        /// The run it drives.
        run: String,
    },
    /// A run of this workspace is being driven, and this process cannot read its own ancestry
    /// or the kernel's lock table from `/proc` to tell whether it descends from the driver.
    Unverifiable {
        /// The run being driven.
        run: String,
    },
    /// A run of this workspace is being driven by a process this one cannot see: it runs in
    /// another PID namespace (as `unshare -p` makes one) or behind another `/proc`.
    DriverHidden {
        /// The run being driven.
        run: String,
    },
}

impl fmt::Display for Inside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inside::Marked { by } => write!(
                f,
                "{AGENT_MARK} is set in its environment (by tether process {by})"
            ),
            Inside::Ancestor { pid, run } => {
                write!(
                    f,
                    "it descends from tether process {pid}, which drives run {run}"
                )
            }
            Inside::Unverifiable { run } => write!(
                f,
                "run {run} is being driven and this command cannot read /proc to show it is \
                 not the driver's descendant"
            ),
            Inside::DriverHidden { run } => write!(
                f,
                "run {run} is being driven by a process this command cannot see (another PID \
                 namespace or another /proc)"
            ),
        }
    }
}

/// A human act was asked for from inside an agent's process tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refused: {} is for a person, and this command runs inside an agent's process tree ({inside}). {}",
    act.what(),
    act.instead()
)]
pub struct NotAHuman {
    /// What was asked for.
    pub act: HumanAct,
    /// How it was told.
    pub inside: Inside,
}

/// `Ok` when this process may do `act` for a person: `env` has no [`AGENT_MARK`] and no
/// ancestor drives a run of `ws`.
pub fn require_human(ws: &Workspace, env: &dyn Env, act: HumanAct) -> Result<(), NotAHuman> {
    match inside_agent(ws, env) {
        None => Ok(()),
        Some(inside) => Err(NotAHuman { act, inside }),
    }
}

/// Whether this process runs inside an agent's process tree, and how that shows.
pub fn inside_agent(ws: &Workspace, env: &dyn Env) -> Option<Inside> {
    if let Some(by) = env.var(AGENT_MARK) {
        return Some(Inside::Marked { by });
    }
    // A run whose driver starts or exits between the two looks (its lock, then the kernel's
    // table) reads as driven by a hidden process; a hidden driver stays hidden when looked at
    // again, a passing one does not.
    let mut found = look(ws);
    for _ in 0..HIDDEN_LOOKS {
        if !matches!(found, Some(Inside::DriverHidden { .. })) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        found = look(ws);
    }
    found
}

/// How many more times a driver that looks hidden is looked for.
const HIDDEN_LOOKS: usize = 3;

/// One look at the runs of `ws` and the processes driving them.
fn look(ws: &Workspace) -> Option<Inside> {
    let driven = driven_runs(ws);
    if driven.is_empty() {
        // No run of this workspace is being driven, so no agent of it is running.
        return None;
    }
    let (Some(ancestors), Some(kernel)) = (process::ancestors(), flock_holders()) else {
        let run = driven[0].run.clone();
        return Some(Inside::Unverifiable { run });
    };
    let ancestors: BTreeSet<u32> = ancestors.into_iter().collect();
    if let Some((pid, run)) = driving_ancestor(&driven, &kernel, &ancestors) {
        return Some(Inside::Ancestor { pid, run });
    }
    hidden_driver(&driven, &kernel).map(|run| Inside::DriverHidden { run })
}

/// A run whose lock is held by a live process, with its lock file's inode and recorded pid.
struct Driven {
    run: String,
    ino: u64,
    recorded: u32,
}

/// The runs of `ws` whose lock some live process holds right now.
fn driven_runs(ws: &Workspace) -> Vec<Driven> {
    let Ok(entries) = fs::read_dir(ws.runs_dir()) else {
        return Vec::new();
    };
    entries
        .take(MAX_RUNS)
        .flatten()
        .filter_map(|entry| {
            let lock = entry.path().join("lock");
            let meta = fs::symlink_metadata(&lock)
                .ok()
                .filter(fs::Metadata::is_file)?;
            let recorded = RunLock::holder(&lock)?;
            Some(Driven {
                run: entry.file_name().to_string_lossy().into_owned(),
                ino: meta.ino(),
                recorded,
            })
        })
        .collect()
}

/// An ancestor holding the lock of one of the `driven` runs, and the run.
fn driving_ancestor(
    driven: &[Driven],
    kernel: &[(u32, u64)],
    ancestors: &BTreeSet<u32>,
) -> Option<(u32, String)> {
    driven.iter().find_map(|d| {
        kernel
            .iter()
            .find(|(pid, ino)| *ino == d.ino && ancestors.contains(pid))
            .map(|(pid, _)| *pid)
            .or_else(|| ancestors.contains(&d.recorded).then_some(d.recorded))
            .map(|pid| (pid, d.run.clone()))
    })
}

/// A driven run whose lock holder this process cannot see: the kernel's lock table, as this
/// process's `/proc` shows it, lists no visible holder of the lock (the table leaves out holders
/// of other PID namespaces).
fn hidden_driver(driven: &[Driven], kernel: &[(u32, u64)]) -> Option<String> {
    driven
        .iter()
        .find(|d| {
            !kernel.iter().any(|(pid, ino)| {
                *ino == d.ino && *pid > 0 && fs::metadata(format!("/proc/{pid}")).is_ok()
            })
        })
        .map(|d| d.run.clone())
}

/// `(pid, inode)` of every `flock` the kernel lists in `/proc/locks`; `None` if unreadable.
fn flock_holders() -> Option<Vec<(u32, u64)>> {
    let mut text = String::new();
    File::open("/proc/locks")
        .and_then(|f| f.take(MAX_LOCKS).read_to_string(&mut text))
        .ok()?;
    Some(text.lines().filter_map(parse_lock_line).collect())
}

/// `1: FLOCK  ADVISORY  WRITE 1234 08:02:131074 0 EOF` → `(1234, 131074)`; waiters (`->`) and
/// other lock kinds are skipped.
fn parse_lock_line(line: &str) -> Option<(u32, u64)> {
    let mut fields = line.split_whitespace().skip(1);
    if fields.next()? != "FLOCK" {
        return None;
    }
    let mut fields = fields.skip(2);
    let pid = fields.next()?.parse().ok()?;
    let ino = fields.next()?.rsplit(':').next()?.parse().ok()?;
    Some((pid, ino))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tether_config::MapEnv;

    use super::*;

    #[test]
    fn lock_lines_name_the_holder_and_the_inode() {
        assert_eq!(
            parse_lock_line("1: FLOCK  ADVISORY  WRITE 1234 08:02:131074 0 EOF"),
            Some((1234, 131_074))
        );
        assert_eq!(
            parse_lock_line("2: POSIX  ADVISORY  WRITE 1234 08:02:131074 0 EOF"),
            None
        );
        assert_eq!(
            parse_lock_line("2: -> FLOCK  ADVISORY  WRITE 99 08:02:7 0 EOF"),
            None
        );
    }

    #[test]
    fn the_mark_refuses_and_says_what_to_do_instead() {
        let ws = Workspace::at(tempfile::tempdir().unwrap().path());
        let env = MapEnv::new().with(AGENT_MARK, "4242");
        let err = require_human(&ws, &env, HumanAct::ApproveContracts).unwrap_err();
        assert_eq!(err.inside, Inside::Marked { by: "4242".into() });
        let text = err.to_string();
        assert!(
            text.contains("approving a goal's contract is for a person"),
            "{text}"
        );
        assert!(
            text.contains("`tether plan approve` in their own shell"),
            "{text}"
        );
    }

    #[test]
    fn a_person_outside_any_run_may_act() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        assert_eq!(
            require_human(&ws, &MapEnv::new(), HumanAct::CancelGoal),
            Ok(())
        );
    }

    #[test]
    fn a_descendant_of_the_process_holding_a_run_lock_is_refused() {
        // This test process holds a run's lock, standing in for a loop; a command whose
        // ancestry contains it is the agent's.
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let lock_path = ws.runs_dir().join("r-test").join("lock");
        let _lock = RunLock::acquire(&lock_path).unwrap();
        let me: BTreeSet<u32> = [std::process::id()].into();
        let kernel = flock_holders().unwrap();
        let driven = driven_runs(&ws);
        assert_eq!(
            driving_ancestor(&driven, &kernel, &me),
            Some((std::process::id(), "r-test".to_owned()))
        );
        // The holder is visible from here, so it is not hidden.
        assert_eq!(hidden_driver(&driven, &kernel), None);
        // Emptied by the agent, the lock file still names its holder through the kernel.
        fs::write(&lock_path, "").unwrap();
        let driven = driven_runs(&ws);
        assert_eq!(
            driving_ancestor(&driven, &kernel, &me).map(|(pid, _)| pid),
            Some(std::process::id())
        );
        let nobody: BTreeSet<u32> = [1].into();
        assert_eq!(driving_ancestor(&driven, &kernel, &nobody), None);
        // A lock table that does not show the holder (as in another PID namespace) hides it.
        assert_eq!(hidden_driver(&driven, &[]), Some("r-test".to_owned()));
    }
}
