//! Signalling a process through a pidfd: a descriptor naming one process, never a pid another
//! process reused.

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};

/// A pidfd for `pid`, if it still exists.
#[allow(unsafe_code)]
pub(crate) fn open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open returns a new descriptor (owned below) or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: a new descriptor nobody else owns.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends `signal` (0: only whether the process is there) to the process `pidfd` names; whether
/// it was sent.
#[allow(unsafe_code)]
pub(crate) fn signal(pidfd: &OwnedFd, signal: libc::c_int) -> bool {
    // SAFETY: a signal through a pidfd the caller owns; no siginfo.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
    r == 0
}
