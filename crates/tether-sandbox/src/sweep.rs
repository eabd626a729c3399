//! What a run without a sandbox leaves behind, killed at its end.
//!
//! With the sandbox off there is no PID namespace to end (see `holder`): the process driving the
//! run is a child subreaper instead, so whatever the agent left running when its parent exited
//! (`setsid`, a double fork, `nohup`) became this process's child. [`kill_descendants`] kills
//! every descendant of this process but the holders of run namespaces (and what runs in them),
//! loops until none is left (what a killed process had started is handed to this process in
//! turn), within a bound, and reaps what it killed. A process is signalled through a pidfd
//! opened while its start time was still the one read, so a pid reused meanwhile is never hit.
//!
//! It is only for a moment when no run of this process has a process of its own running: it
//! cannot tell one run's leftovers from another's.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The most processes looked at in `/proc`.
const MAX_PROCESSES: usize = 100_000;

/// How many times descendants are looked for and killed.
const MAX_ROUNDS: usize = 50;

/// Between rounds: killed processes exit, and what they started is handed over.
const ROUND_PAUSE: Duration = Duration::from_millis(20);

/// What [`kill_descendants`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Swept {
    /// How many processes it killed.
    pub killed: usize,
    /// How many it found still alive when it gave up (0: none is left).
    pub left: usize,
}

/// One line of `/proc/<pid>/stat`, as far as a sweep needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: u32,
    ppid: u32,
    start: u64,
    zombie: bool,
}

/// Kills every live descendant of this process but the holders of run namespaces and theirs,
/// until none is left or 50 rounds have passed; reaps those that were its own children.
pub fn kill_descendants() -> Swept {
    let me = std::process::id();
    let mut swept = Swept::default();
    let mut killed_children = BTreeSet::new();
    for round in 0..MAX_ROUNDS {
        let spared = crate::holder::holder_pids();
        let victims = descendants(me, &table(), &spared);
        reap(&mut killed_children);
        if victims.is_empty() {
            return swept;
        }
        if round + 1 == MAX_ROUNDS {
            swept.left = victims.len();
            break;
        }
        for victim in victims {
            if kill_exactly(victim) {
                swept.killed += 1;
                if victim.ppid == me {
                    killed_children.insert(victim.pid);
                }
            }
        }
        std::thread::sleep(ROUND_PAUSE);
    }
    reap(&mut killed_children);
    swept
}

/// Collects those of `pids` (this process's children it killed) that have exited.
fn reap(pids: &mut BTreeSet<u32>) {
    pids.retain(|pid| {
        let Ok(pid) = libc::pid_t::try_from(*pid) else {
            return false;
        };
        #[allow(unsafe_code)]
        // SAFETY: waitpid for one child, without waiting, no status wanted.
        let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        r == 0
    });
}

/// Every process `/proc` shows (up to [`MAX_PROCESSES`]).
fn table() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(MAX_PROCESSES)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .collect()
}

/// `/proc/<pid>/stat` of `pid`, as far as a sweep needs it.
fn stat(pid: u32) -> Option<Proc> {
    crate::proc_stat::read(pid).map(|s| Proc {
        pid,
        ppid: s.ppid,
        start: s.start_time,
        zombie: s.zombie,
    })
}

/// The live descendants of `root` in `procs`, leaving out `spared` and what descends from them.
fn descendants(root: u32, procs: &[Proc], spared: &[u32]) -> Vec<Proc> {
    let mut children: BTreeMap<u32, Vec<Proc>> = BTreeMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(*p);
    }
    let mut out = Vec::new();
    let mut seen = BTreeSet::from([root]);
    let mut next = vec![root];
    while let Some(parent) = next.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            if spared.contains(&child.pid) || !seen.insert(child.pid) {
                continue;
            }
            if !child.zombie {
                out.push(*child);
            }
            next.push(child.pid);
        }
    }
    out
}

/// SIGKILL to `victim`, through a pidfd opened while it was still the process read (same start
/// time, alive). Whether it was sent.
fn kill_exactly(victim: Proc) -> bool {
    let Some(pidfd) = crate::pidfd::open(victim.pid) else {
        return false;
    };
    let same = stat(victim.pid).is_some_and(|now| now.start == victim.start && !now.zombie);
    same && crate::pidfd::signal(&pidfd, libc::SIGKILL)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn p(pid: u32, ppid: u32) -> Proc {
        Proc {
            pid,
            ppid,
            start: 1,
            zombie: false,
        }
    }

    #[test]
    fn descendants_are_found_through_every_level_but_the_spared_ones() {
        let mut zombie = p(6, 1);
        zombie.zombie = true;
        let procs = [
            p(1, 0),
            p(2, 1),
            p(3, 2),
            p(4, 1),
            p(5, 4),
            zombie,
            p(7, 99),
        ];
        let pids = |found: Vec<Proc>| {
            let mut pids: Vec<u32> = found.iter().map(|p| p.pid).collect();
            pids.sort_unstable();
            pids
        };
        assert_eq!(pids(descendants(1, &procs, &[])), vec![2, 3, 4, 5]);
        assert_eq!(pids(descendants(1, &procs, &[4])), vec![2, 3]);
        assert!(descendants(7, &procs, &[]).is_empty());
    }
}
