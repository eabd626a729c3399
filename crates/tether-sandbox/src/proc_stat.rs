//! One process's `/proc/<pid>/stat`, read bounded: its parent, its start time (with the pid, what
//! names a process: a pid alone can be reused after its process dies) and whether it has exited.
//! The one reader of it, for the sandbox's sweep and for the ancestry tether walks to tell a
//! person's command from an agent's.

use std::fs::File;
use std::io::Read as _;

/// The most bytes read of one `/proc/<pid>/stat` (it is a few hundred).
const MAX_STAT: u64 = 4096;

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The parent's pid (0 for the kernel's own).
    pub ppid: u32,
    /// When the process started, in clock ticks since boot.
    pub start_time: u64,
    /// Whether it has exited and waits to be reaped (state `Z` or `X`).
    pub zombie: bool,
}

/// `/proc/<pid>/stat` of `pid`, if it exists and reads as expected.
pub fn read(pid: u32) -> Option<ProcStat> {
    read_at(&format!("/proc/{pid}/stat"))
}

/// `/proc/self/stat`: this process as the mounted `/proc` numbers it (in a PID namespace of its
/// own, a process's own pids differ from those of the `/proc` it reads).
pub fn read_self() -> Option<ProcStat> {
    read_at("/proc/self/stat")
}

fn read_at(path: &str) -> Option<ProcStat> {
    let mut text = String::new();
    File::open(path)
        .ok()?
        .take(MAX_STAT)
        .read_to_string(&mut text)
        .ok()?;
    parse(&text)
}

/// The fields after the command name (which may hold spaces and parentheses, so the last `)`
/// ends it): the state is field 3, the parent field 4, the start time field 22.
pub fn parse(text: &str) -> Option<ProcStat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        zombie: matches!(*fields.first()?, "Z" | "X"),
        ppid: fields.get(1)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_names_the_parent_the_state_and_the_start() {
        let line = "42 (a (b) c) Z 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 99 1 1 1";
        assert_eq!(
            parse(line),
            Some(ProcStat {
                ppid: 7,
                start_time: 99,
                zombie: true
            })
        );
        assert_eq!(parse("42 (x) S"), None);
        let me = read(std::process::id()).map(|s| s.zombie);
        assert_eq!(me, Some(false));
    }
}
