//! What a tether process killed by SIGKILL left running.
//!
//! A turn's agent CLI runs in its own process group, and tether stops that group when the turn
//! ends, is cancelled or times out — but a tether killed outright cannot. Its agent (and the
//! agent's `tether mcp`) would go on editing the workspace beside the run that `tether resume`
//! starts. Every process tether starts carries [`AGENT_MARK`] naming its pid, so when a run is
//! taken up again, the processes still marked with the pid of its dead driver are found in
//! `/proc` and their process groups stopped (SIGTERM, then SIGKILL after a grace period).
//!
//! Nothing is taken for a leftover while a process with the driver's pid runs: the pid may have
//! been reused, and the processes marked with it may be that process's own.

use std::fs::File;
use std::io::Read as _;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, getpgid};

use crate::process::{AGENT_MARK, stat};

/// The most bytes read from one `/proc/<pid>/environ`.
const MAX_ENVIRON: u64 = 1 << 20;

/// The most processes looked at in `/proc`.
const MAX_PROCESSES: usize = 100_000;

/// How often the groups are checked while they are given time to stop.
const POLL: Duration = Duration::from_millis(20);

/// The pids of the processes whose [`AGENT_MARK`] names `driver`, when no process with that pid
/// runs any more; empty otherwise.
pub fn leftovers_of(driver: u32) -> Vec<u32> {
    if driver == 0 || stat(driver).is_some() {
        return Vec::new();
    }
    let mark = format!("{AGENT_MARK}={driver}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    entries
        .flatten()
        .take(MAX_PROCESSES)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me && environ_has(*pid, &mark))
        .collect()
}

/// Whether `/proc/<pid>/environ` holds the entry `entry` (bounded; unreadable is no).
fn environ_has(pid: u32, entry: &str) -> bool {
    let mut bytes = Vec::new();
    let read = File::open(format!("/proc/{pid}/environ"))
        .and_then(|f| f.take(MAX_ENVIRON).read_to_end(&mut bytes));
    read.is_ok() && bytes.split(|b| *b == 0).any(|e| e == entry.as_bytes())
}

/// Stops the process groups of what the dead `driver` left running: SIGTERM, then SIGKILL to the
/// groups still there after `grace`. Returns how many processes were found. Never signals this
/// process's own group.
pub fn stop_leftovers(driver: u32, grace: Duration) -> usize {
    let pids = leftovers_of(driver);
    let own = getpgid(None).ok();
    let mut groups: Vec<Pid> = pids
        .iter()
        .filter_map(|pid| getpgid(Some(Pid::from_raw(i32::try_from(*pid).ok()?))).ok())
        .filter(|group| Some(*group) != own && group.as_raw() > 1)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    for group in &groups {
        let _ = killpg(*group, Signal::SIGTERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && groups.iter().any(|g| killpg(*g, None).is_ok()) {
        std::thread::sleep(POLL);
    }
    for group in &groups {
        let _ = killpg(*group, Signal::SIGKILL);
    }
    if !pids.is_empty() {
        tracing::warn!(
            driver,
            processes = pids.len(),
            "stopped what a killed tether process left running"
        );
    }
    pids.len()
}
