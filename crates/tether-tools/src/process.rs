//! What tether reads about processes from `/proc`, and the mark it leaves on its children.
//!
//! Some acts only a person may do (approving a contract, signing off without a judge). To refuse
//! them when an agent asks, tether must tell whether a command runs inside a process tree it
//! started: every child it spawns carries [`AGENT_MARK`] in its environment, and a process's
//! ancestry ([`ancestors`]) can be walked through the parent pids in `/proc/<pid>/stat`. A pid
//! alone can be reused after its process dies, so a recorded process is named by its pid *and*
//! start time ([`ProcessId`]). Every `/proc` read is bounded.

use std::fmt;
use std::str::FromStr;

/// Set in the environment of every process tether starts (the agent, its shell commands, a
/// goal's verify command), to the pid of the tether process that started it. A command that
/// finds it set runs inside an agent's (or a check's) process tree, not in a person's shell.
pub const AGENT_MARK: &str = "TETHER_AGENT";

/// Where `program` is: a name with a `/` taken relative to `cwd`, a bare name looked up on
/// `PATH`, as `exec` would find it; `None` when no regular file is there.
pub fn locate(program: &std::path::Path, cwd: &std::path::Path) -> Option<std::path::PathBuf> {
    if program.components().count() > 1 {
        let path = cwd.join(program);
        return path.is_file().then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The most parents [`ancestors`] follows.
pub const MAX_ANCESTORS: usize = 128;

/// A process's parent and start time, from `/proc/<pid>/stat` (the sandbox's one reader of it).
pub use tether_sandbox::proc_stat::ProcStat as Stat;

/// `/proc/<pid>/stat` of `pid`, if it exists and reads as expected.
pub fn stat(pid: u32) -> Option<Stat> {
    tether_sandbox::proc_stat::read(pid)
}

/// The pids of this process's parent, its parent, … up to (not including) pid 1 or the kernel,
/// at most [`MAX_ANCESTORS`], as the mounted `/proc` numbers them. `None` where `/proc` does not
/// show this process (none mounted, or something else mounted over it).
///
/// The walk starts from `/proc/self`, not from `getppid()`: in a PID namespace of its own a
/// process's pids differ from the ones of the `/proc` it reads, and mixing the two would walk
/// some other process's ancestry.
pub fn ancestors() -> Option<Vec<u32>> {
    let mut pid = tether_sandbox::proc_stat::read_self()?.ppid;
    let mut out = Vec::new();
    while pid > 1 && out.len() < MAX_ANCESTORS && !out.contains(&pid) {
        out.push(pid);
        match stat(pid) {
            Some(s) => pid = s.ppid,
            None => break,
        }
    }
    Some(out)
}

/// A process named so that a reused pid is not mistaken for it: `<pid>:<start time>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    /// The pid.
    pub pid: u32,
    /// Its start time (clock ticks since boot); 0 when `/proc` could not say.
    pub start_time: u64,
}

impl ProcessId {
    /// This process.
    pub fn current() -> Self {
        let pid = std::process::id();
        ProcessId {
            pid,
            start_time: stat(pid).map_or(0, |s| s.start_time),
        }
    }

    /// Whether the process still runs (a zombie counts: it has not been reaped). A start time of
    /// 0 matches any process with the pid.
    pub fn is_alive(&self) -> bool {
        stat(self.pid).is_some_and(|s| self.start_time == 0 || s.start_time == self.start_time)
    }
}

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.pid, self.start_time)
    }
}

/// The text does not name a process (`<pid>:<start time>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a process id (`<pid>:<start time>`): {0:?}")]
pub struct BadProcessId(String);

impl FromStr for ProcessId {
    type Err = BadProcessId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadProcessId(s.to_owned());
        let (pid, start) = s.split_once(':').ok_or_else(bad)?;
        Ok(ProcessId {
            pid: pid.parse().map_err(|_| bad())?,
            start_time: start.parse().map_err(|_| bad())?,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn this_process_is_alive_and_its_parent_is_an_ancestor() {
        let me = ProcessId::current();
        assert!(me.start_time > 0);
        assert!(me.is_alive());
        let other = ProcessId {
            start_time: me.start_time + 1,
            ..me
        };
        assert!(!other.is_alive(), "a reused pid is another process");
        assert_eq!(me.to_string().parse::<ProcessId>(), Ok(me));
        assert!("12".parse::<ProcessId>().is_err());
        let up = ancestors().unwrap();
        assert_eq!(up.first(), Some(&std::os::unix::process::parent_id()));
    }
}
