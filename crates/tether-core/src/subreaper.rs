//! Keeping an agent's descendants in the loop process's tree.
//!
//! A process whose parent exits is normally handed to init, so an agent's command that forks
//! twice (`sh -c 'cmd &'`) would leave tether's process tree, and with it the ancestry check of
//! [`crate::human_act`]. A *child subreaper* adopts such orphans instead. The process that drives
//! a run calls [`adopt_orphans`] once; the driver then reaps the adopted orphans that have exited
//! at each iteration boundary ([`reap_orphans`]), when no child of its own is being waited for
//! (tether's own children are reaped by the runtime that spawned them).
//!
//! In a run's sandbox an orphan goes to the init of the run's PID namespace instead (itself a
//! child of this process, so the orphan stays in its tree), and dies with the run
//! (`tether_sandbox::RunNamespace`). With the sandbox off, what this process adopted is killed
//! as the run ends (`tether_runtime::lifetime`).

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::prctl;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};

/// Whether this process adopts orphans (and so must reap them).
static ADOPTING: AtomicBool = AtomicBool::new(false);

/// Whether more than one part of this process waits for children of its own at once (several
/// runs, or a run of many goals and its coordinator): then no boundary reaps "any child".
static SHARED: AtomicBool = AtomicBool::new(false);

/// The most exited orphans reaped at one boundary.
const MAX_REAPED: usize = 10_000;

/// Makes this process a child subreaper: descendants whose parent exits become its children.
/// Call it in the process that drives a run, before the first turn; it lasts for the process.
pub fn adopt_orphans() -> Result<(), nix::Error> {
    prctl::set_child_subreaper(true)?;
    ADOPTING.store(true, Ordering::SeqCst);
    Ok(())
}

/// Says that this process drives several runs at once (a run of many goals, a server's
/// runs): one run's boundary is then no moment when no child is waited for, so orphans are no
/// longer reaped there (in a sandboxed run they go to the run's own PID namespace, which reaps
/// them and ends with the run; with the sandbox off, what the run adopted is swept as it ends).
pub fn share_process() {
    SHARED.store(true, Ordering::SeqCst);
}

/// Reaps the adopted orphans that have exited, so they do not linger as zombies. Does nothing
/// unless [`adopt_orphans`] was called, or once [`share_process`] was. Only call it when no
/// child of this process is being waited for by anyone else (an iteration boundary of the one
/// run it drives): it collects whichever child has exited.
pub(crate) fn reap_orphans() {
    if !ADOPTING.load(Ordering::SeqCst) || SHARED.load(Ordering::SeqCst) {
        return;
    }
    for _ in 0..MAX_REAPED {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
