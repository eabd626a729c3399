//! What a killed tether left running is found by its mark and stopped, group and all; nothing
//! is taken for a leftover while the marking pid is alive.

use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use tether_tools::leftovers::{leftovers_of, stop_leftovers};
use tether_tools::process::{AGENT_MARK, stat};

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    assert!(stat(pid).is_none());
    pid
}

/// A `sleep` (and its own child) in a process group of its own, marked as started by `by`.
fn marked(by: u32) -> std::process::Child {
    Command::new("sh")
        .args(["-c", "sleep 60 & sleep 60; wait"])
        .env(AGENT_MARK, by.to_string())
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap()
}

#[test]
fn the_processes_a_dead_driver_marked_are_stopped_with_their_group() {
    let dead = dead_pid();
    let mut child = marked(dead);
    let pid = child.id();
    tether_testkit::wait_until("the marked group to start", Duration::from_secs(10), || {
        (leftovers_of(dead).len() >= 3).then_some(())
    })
    .unwrap();
    assert!(leftovers_of(dead).contains(&pid));
    // Our own child stays a zombie until waited for, so the grace runs out: keep it short.
    assert!(stop_leftovers(dead, Duration::from_millis(300)) >= 3);
    child.wait().unwrap();
    tether_testkit::wait_until("the group to be gone", Duration::from_secs(10), || {
        leftovers_of(dead).is_empty().then_some(())
    })
    .unwrap();
}

#[test]
fn nothing_is_a_leftover_while_the_marking_pid_runs() {
    let me = std::process::id();
    let mut child = marked(me);
    assert!(leftovers_of(me).is_empty());
    assert_eq!(stop_leftovers(me, Duration::from_millis(10)), 0);
    assert!(leftovers_of(0).is_empty());
    child.kill().unwrap();
    child.wait().unwrap();
}
