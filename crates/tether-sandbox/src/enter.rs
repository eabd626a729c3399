//! A sandboxed child joining its run's PID namespace (see `holder`), between `fork` and `exec`.
//!
//! `setns` into a PID namespace only places the caller's future children there, so the child
//! joins the holder's user namespace (whose owner has every capability in it: the right to join
//! the PID namespace it owns), then the PID namespace, and forks once more: the new process goes
//! on with the sandbox's setup (its own user and mount namespace nested inside, Landlock,
//! seccomp) and runs the program, inside the run's namespace; the first stays outside, as the
//! process the spawner started, waits for it and ends as it ended — the same exit code, or
//! killed by the same signal — so a caller waiting on the child it spawned sees the program's
//! end. Signals the spawner sends the process group (a timeout's SIGTERM, then SIGKILL) reach
//! both: the program is still in the group. The waiting process ignores every signal it can; a
//! SIGKILL ends it, and the program gets SIGKILL too (its parent-death signal), so killing the
//! child the spawner holds still kills the program.

use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd};

use crate::fork::{self, Side};

/// The name (`comm`) of the process waiting on a program outside the namespace.
const WAITER_NAME: &std::ffi::CStr = c"tether-wait";

/// The descriptors of a run's namespaces, for one child.
#[derive(Debug)]
pub(crate) struct Entry {
    user_ns: OwnedFd,
    pid_ns: OwnedFd,
}

impl Entry {
    pub(crate) fn new(user_ns: OwnedFd, pid_ns: OwnedFd) -> Self {
        Entry { user_ns, pid_ns }
    }

    /// In a freshly forked child: joins the namespaces and forks. Returns only in the new
    /// process, inside the run's PID namespace; the first one waits for it and exits as it did.
    #[allow(unsafe_code)]
    pub(crate) fn enter(&self) -> io::Result<()> {
        // SAFETY (each block): system calls on descriptors this struct owns and on signal sets
        // this function owns; the fork's child makes system calls only (see `fork::clone3`),
        // and the parent never returns from `pass_on`.
        unsafe {
            if libc::setns(self.user_ns.as_raw_fd(), libc::CLONE_NEWUSER) != 0
                || libc::setns(self.pid_ns.as_raw_fd(), libc::CLONE_NEWPID) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        // No signal may end the waiting process between the fork and its ignoring them.
        let (all, none) = signal_sets();
        unsafe { libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut()) };
        match unsafe { fork::clone3(0, None) } {
            Err(e) => {
                unsafe { libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) };
                // ENOMEM: the namespace's init is gone; the run has ended.
                Err(e)
            }
            Ok(Side::Parent(program)) => pass_on(program),
            Ok(Side::Child) => unsafe {
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                // A parent outside this namespace reads as 0; the holder (1) adopted this
                // process if the waiting one died before the line above.
                if libc::getppid() != 0 {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            },
        }
    }
}

/// Every signal, and none.
#[allow(unsafe_code)]
fn signal_sets() -> (libc::sigset_t, libc::sigset_t) {
    // SAFETY: sigfillset and sigemptyset initialise the sets this function owns.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigemptyset(&mut none);
        (all, none)
    }
}

/// The process the spawner started, outside the run's namespace: holds nothing open, is named
/// `tether-wait`, waits for `program` and ends as it ended. Signals stay blocked (but SIGKILL,
/// which cannot be).
#[allow(unsafe_code)]
fn pass_on(program: libc::pid_t) -> ! {
    // SAFETY (each block): system calls on integers, a literal and a status this function
    // owns.
    unsafe {
        libc::syscall(libc::SYS_close_range, 0u32, libc::c_uint::MAX, 0u32);
        // Named for what it is, not `tether`: nothing looking for tether finds it.
        libc::prctl(libc::PR_SET_NAME, WAITER_NAME.as_ptr(), 0, 0, 0);
    }
    // tether's signal handlers never run here: every signal stays blocked (the one passed on
    // is put back to its default below).
    let mut status: libc::c_int = 0;
    loop {
        let r = unsafe { libc::waitpid(program, &mut status, 0) };
        if r == program {
            break;
        }
        if r < 0 && fork::errno() != libc::EINTR {
            fork::exit_now(127);
        }
    }
    if libc::WIFEXITED(status) {
        fork::exit_now(libc::WEXITSTATUS(status));
    }
    let signal = libc::WTERMSIG(status);
    unsafe {
        // Killed by `signal`: so is this process, without a core dump of its own.
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, signal);
        libc::signal(signal, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
    }
    fork::exit_now(128 + signal)
}
