//! Acts only a person may do, refused when an agent asks for them.
//!
//! tether's promise rests on a few decisions no agent may take for itself: agreeing to a goal's
//! contract, signing a goal off without the judge, cancelling a goal, answering a question,
//! resuming a run a rule paused for a person. The agent has a shell and runs as the same user, so
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
//! Either one refuses, and the refusal says what the person should do instead. Neither is a
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
    /// Answering a question (`tether answer`).
    AnswerQuestion,
    /// Taking a stopped run up again (`tether resume`).
    ResumeRun,
}

impl HumanAct {
    /// What the act is, as a refusal names it.
    pub fn what(self) -> &'static str {
        match self {
            HumanAct::ApproveContracts => "approving a goal's contract",
            HumanAct::SignOffWithoutJudge => "signing a goal off without the judge (--no-judge)",
            HumanAct::RunWithoutJudge => "starting a goal run without the judge (--no-judge)",
            HumanAct::CancelGoal => "cancelling a goal",
            HumanAct::AnswerQuestion => "answering a question",
            HumanAct::ResumeRun => "resuming a run",
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
            HumanAct::AnswerQuestion => {
                "The question waits for a person: they answer it with `tether answer` in their \
                 own shell, on the terminal or on Zulip."
            }
            HumanAct::ResumeRun => {
                "A person resumes a run with `tether resume` in their own shell, outside the \
                 agent."
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
    let ancestors: BTreeSet<u32> = process::ancestors().into_iter().collect();
    if ancestors.is_empty() {
        return None;
    }
    driving_ancestor(ws, &ancestors).map(|(pid, run)| Inside::Ancestor { pid, run })
}

/// An ancestor holding the lock of one of `ws`'s runs, and the run.
fn driving_ancestor(ws: &Workspace, ancestors: &BTreeSet<u32>) -> Option<(u32, String)> {
    let kernel = flock_holders();
    let entries = fs::read_dir(ws.runs_dir()).ok()?;
    for entry in entries.take(MAX_RUNS).flatten() {
        let lock = entry.path().join("lock");
        let Ok(meta) = fs::symlink_metadata(&lock) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let run = entry.file_name().to_string_lossy().into_owned();
        let by_kernel = kernel
            .iter()
            .find(|(pid, ino)| *ino == meta.ino() && ancestors.contains(pid));
        if let Some((pid, _)) = by_kernel {
            return Some((*pid, run));
        }
        if let Some(pid) = RunLock::holder(&lock).filter(|p| ancestors.contains(p)) {
            return Some((pid, run));
        }
    }
    None
}

/// `(pid, inode)` of every `flock` the kernel lists in `/proc/locks` (empty if unreadable).
fn flock_holders() -> Vec<(u32, u64)> {
    let mut text = String::new();
    let read = File::open("/proc/locks").and_then(|f| f.take(MAX_LOCKS).read_to_string(&mut text));
    if read.is_err() {
        return Vec::new();
    }
    text.lines().filter_map(parse_lock_line).collect()
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
        // This test process holds the lock; a child `sh` looks at its own ancestry through the
        // same code by way of the pid: here we check the parent walk finds this process.
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let lock_path = ws.runs_dir().join("r-test").join("lock");
        let _lock = RunLock::acquire(&lock_path).unwrap();
        let me: BTreeSet<u32> = [std::process::id()].into();
        assert_eq!(
            driving_ancestor(&ws, &me),
            Some((std::process::id(), "r-test".to_owned()))
        );
        // Emptied by the agent, the lock file still names its holder through the kernel.
        fs::write(&lock_path, "").unwrap();
        assert_eq!(
            driving_ancestor(&ws, &me).map(|(pid, _)| pid),
            Some(std::process::id())
        );
        let nobody: BTreeSet<u32> = [1].into();
        assert_eq!(driving_ancestor(&ws, &nobody), None);
    }
}
