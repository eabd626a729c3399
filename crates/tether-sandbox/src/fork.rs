//! Making processes from a process that may have threads, and what such a process may do before
//! it `exec`s or exits: system calls only.
//!
//! The holder of a run's PID namespace (`holder`) and the process that waits on a sandboxed
//! program (`enter`) are copies of tether that never `exec`. A copy of a process with threads
//! has one thread, and any lock another thread held (the allocator's, stdio's) stays held
//! forever; so they make no call that could take one — not even the C library's `fork`, which
//! runs `atfork` handlers and takes the allocator's locks. They fork with the raw `clone3`
//! system call, and everything they use was built before.

use std::io;

/// `struct clone_args` as far as `CLONE_ARGS_SIZE_VER0`: the fields every kernel with
/// `clone3` (5.3) reads.
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
}

/// Which side of a fork this is.
pub(crate) enum Side {
    /// The new process.
    Child,
    /// The calling process: the child's pid.
    Parent(libc::pid_t),
}

/// Forks with `clone3` (`flags` added to a plain fork; `SIGCHLD` when the child exits), storing
/// a pidfd for the child in `pidfd` when given (`CLONE_PIDFD`).
///
/// # Safety
///
/// The child is a copy of this process with one thread: until it `exec`s or `_exit`s, it may
/// only make system calls (nothing that allocates or takes a lock) and must never return to code
/// that expects the process it came from (unwind, run destructors, return from `main`).
#[allow(unsafe_code)]
pub(crate) unsafe fn clone3(flags: u64, pidfd: Option<&mut libc::c_int>) -> io::Result<Side> {
    let mut args = CloneArgs {
        flags,
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    if let Some(pidfd) = pidfd {
        args.flags |= libc::CLONE_PIDFD as u64;
        args.pidfd = std::ptr::from_mut(pidfd) as u64;
    }
    // SAFETY: `args` is a `clone_args` of the size passed; with no stack given the child runs
    // on a copy of this one, as after `fork`. What the child may do is the caller's promise.
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::from_mut(&mut args),
            size_of::<CloneArgs>(),
        )
    };
    match r {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Side::Child),
        pid => Ok(Side::Parent(pid as libc::pid_t)),
    }
}

/// Ends the calling process at once, with `code`, running nothing of the process it came from.
#[allow(unsafe_code)]
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process without running handlers or destructors.
    unsafe { libc::_exit(code) }
}

/// Puts every signal handler tether installed (the async runtime's, for one) back to the
/// default: a copy of tether that never `exec`s must not run tether's handlers, which write to
/// descriptors it closed or no longer shares. Signals tether ignores stay ignored.
#[allow(unsafe_code)]
pub(crate) fn default_handlers() {
    for signal in 1..libc::SIGRTMAX() {
        // SAFETY: sigaction with a zeroed struct for the old action, then the default; both
        // fail harmlessly for SIGKILL, SIGSTOP and the signals the C library keeps.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &default, std::ptr::null_mut());
        }
    }
}

/// Closes every descriptor from 3 up but those in `keep`.
#[allow(unsafe_code)]
pub(crate) fn close_all_but(keep: &[libc::c_int]) {
    let mut from: libc::c_int = 3;
    loop {
        // The smallest kept descriptor at or past `from`.
        let next = keep.iter().copied().filter(|fd| *fd >= from).min();
        let to = next.map_or(libc::c_uint::MAX, |fd| (fd - 1) as libc::c_uint);
        if next != Some(from) {
            // SAFETY: close_range on integer bounds; a failure leaves descriptors open, which
            // only keeps files open longer.
            unsafe { libc::syscall(libc::SYS_close_range, from as libc::c_uint, to, 0u32) };
        }
        match next {
            Some(fd) => from = fd + 1,
            None => return,
        }
    }
}

/// Points the standard streams at `/dev/null`.
#[allow(unsafe_code)]
pub(crate) fn null_stdio() -> io::Result<()> {
    // SAFETY: open with a NUL-terminated literal, dup2 and close on integer descriptors.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null < 0 {
            return Err(io::Error::last_os_error());
        }
        for fd in 0..=2 {
            if fd != null && libc::dup2(null, fd) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if null > 2 {
            libc::close(null);
        }
    }
    Ok(())
}

/// The calling thread's `errno` as a positive number (`EIO` when there is none).
pub(crate) fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .filter(|e| *e > 0)
        .unwrap_or(libc::EIO)
}
