//! Nothing the agent starts outlives its run, however it leaves tether's tree: `setsid` (a
//! session and process group of its own, out of reach of the spawner's group kill), a double
//! fork, `nohup`. The built-in agent's `bash` and a command executor start each, marked by a
//! unique `sleep` duration; after the run none is alive. Within the run a `setsid` process
//! started in one `bash` call is still there in the next (a server the agent starts stays up
//! for the run), and tether killed with SIGKILL mid-run takes the agent's processes with it.
//! With the sandbox off, the run's end kills what the agent left behind as well.

use std::fs;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tether_testkit::wait_until;

use super::support::{Hostile, PROBE};
use crate::common::{text, wait_output};

/// How long the processes the agent left have to go once the run is over.
const GONE_WITHIN: Duration = Duration::from_secs(20);

/// A `sleep` duration no other process has: the marker of one process the agent starts (a
/// pattern for it that does not match itself is [`pattern`]).
fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    format!(
        "86400.{:07}{:03}",
        std::process::id() % 10_000_000,
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// A regular expression matching `marker` but not its own text (so a `grep` for it does not find
/// itself).
fn pattern(marker: &str) -> String {
    format!("[{}]{}", &marker[..1], &marker[1..])
}

/// The pids of live processes whose command line holds `marker` (zombies left out: they are
/// dead, waiting to be reaped).
fn alive(marker: &str) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie
                && cmdline
                    .split(|b| *b == 0)
                    .any(|arg| arg == marker.as_bytes())
        })
        .collect()
}

/// Kills whatever still carries one of the markers when a test ends, passed or not.
struct Leftovers(Vec<String>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for marker in &self.0 {
            for pid in alive(marker) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
    }
}

/// Waits until no process carries any of `markers`; fails naming those still alive.
fn assert_all_gone(markers: &[String], what: &str) {
    let left = wait_until(
        &format!("{what}: the agent's processes gone"),
        GONE_WITHIN,
        || markers.iter().all(|m| alive(m).is_empty()).then_some(()),
    );
    let still: Vec<_> = markers.iter().filter(|m| !alive(m).is_empty()).collect();
    assert!(left.is_ok(), "{what}: still alive after the run: {still:?}");
}

/// The three ways out of tether's tree, one marker each: `setsid`, a double fork, `nohup`. Each
/// waits until its process runs `sleep` (so has left the group, or ignores SIGHUP), before the
/// shell ends and the spawner kills its process group.
fn escapes(marks: &[String; 3]) -> [String; 3] {
    let quiet = "> /dev/null 2>&1 < /dev/null";
    [
        started(&format!("setsid sleep {} {quiet} &", marks[0]), &marks[0]),
        started(
            &format!("sh -c '(sleep {} {quiet} &) &'", marks[1]),
            &marks[1],
        ),
        started(&format!("nohup sleep {} {quiet} &", marks[2]), &marks[2]),
    ]
}

/// `command`, then a wait until the process with `mark` in its command line runs `sleep` itself:
/// not `setsid` or `nohup` about to run it, which carry the mark too but have not yet left the
/// process group (or set SIGHUP aside) when the spawner's group kill ends the call.
fn started(command: &str, mark: &str) -> String {
    format!(
        "{command}\nuntil (for p in /proc/[0-9]*; do grep -qs {} $p/cmdline && \
         [ \"$(cat $p/comm 2>/dev/null)\" = sleep ] && exit 0; done; exit 1); do sleep 0.05; done",
        pattern(mark)
    )
}

fn three() -> [String; 3] {
    [marker(), marker(), marker()]
}

/// The built-in agent's `bash`: each escape in a call of its own, then a call that checks the
/// `setsid` one is still there.
fn bash_escapes(unprivileged_user: bool, toml: &str, within_run: bool) {
    let marks = three();
    let _leftovers = Leftovers(marks.to_vec());
    let mut calls: Vec<String> = escapes(&marks).to_vec();
    calls.push(format!(
        "{PROBE}p 'setsid still there' sh -c 'grep -qs {} /proc/[0-9]*/cmdline'\n",
        pattern(&marks[0])
    ));
    let h = Hostile::new(&calls, toml);
    let out = wait_output(
        h.ralph(None, unprivileged_user)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    if within_run {
        h.assert_probes(&out, &[], &["setsid still there"]);
    }
    assert_all_gone(&marks, "bash");
}

#[test]
fn what_the_agents_bash_starts_ends_with_the_run() {
    bash_escapes(false, "", true);
}

#[test]
fn what_the_agents_bash_starts_ends_with_the_run_for_an_ordinary_user() {
    bash_escapes(true, "", true);
}

#[test]
fn with_the_sandbox_off_the_runs_end_kills_what_the_agent_left() {
    bash_escapes(false, "[sandbox]\nmode = \"off\"\n", true);
}

/// A command executor (a program, as an agent CLI is) starts every escape and ends its turn.
fn command_escapes(unprivileged_user: bool) {
    let marks = three();
    let _leftovers = Leftovers(marks.to_vec());
    let h = Hostile::new(
        &[],
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n",
    );
    fs::write(
        h.root().join("agent.sh"),
        format!(
            "cat > /dev/null\n{}\necho 'Done. <promise>DONE</promise>'\n",
            escapes(&marks).join("\n")
        ),
    )
    .unwrap();
    let out = wait_output(
        h.ralph(None, unprivileged_user)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_all_gone(&marks, "command executor");
}

#[test]
fn what_a_command_executor_starts_ends_with_the_run() {
    command_escapes(false);
}

#[test]
fn what_a_command_executor_starts_ends_with_the_run_for_an_ordinary_user() {
    command_escapes(true);
}

/// tether killed with SIGKILL while the agent's `bash` runs: the processes it started, in the
/// call and before it with `setsid`, die with it.
fn killed_mid_run(unprivileged_user: bool) {
    let [away, waiting, _] = three();
    let _leftovers = Leftovers(vec![away.clone(), waiting.clone()]);
    let h = Hostile::new(
        &[
            started(
                &format!("setsid sleep {away} > /dev/null 2>&1 < /dev/null &"),
                &away,
            ),
            format!("sleep {waiting}"),
        ],
        "",
    );
    let mut child = h
        .ralph(None, unprivileged_user)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = wait_until("the agent's processes started", GONE_WITHIN, || {
        (!alive(&away).is_empty() && !alive(&waiting).is_empty()).then_some(())
    });
    if started.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the agent's processes never started");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_all_gone(&[away, waiting], "tether killed");
}

#[test]
fn tether_killed_takes_the_agents_processes_with_it() {
    killed_mid_run(false);
}

#[test]
fn tether_killed_takes_the_agents_processes_with_it_for_an_ordinary_user() {
    killed_mid_run(true);
}
