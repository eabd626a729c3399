//! What a child must not keep of tether's process: its session and controlling terminal, a
//! terminal on a standard stream, and the descriptors tether inherited.
//!
//! A child in tether's session shares its controlling terminal: through `/dev/tty` it could
//! type into the person's terminal (`TIOCSTI`, answering a question as if the person had) or read
//! what they type, and a process it leaves behind could still do so after tether exits. A child
//! in a session of its own has no controlling terminal, and cannot take tether's: a terminal
//! belongs to one session, and stealing it needs a capability the child no longer has.
//!
//! Landlock checks a path when it is opened, so a descriptor tether inherited (from a
//! supervisor, a CI runner, a shell's `3<file`) would let the child read or write a file it could
//! never open. Every descriptor above the standard streams is marked close-on-exec: none survives
//! into the program the child runs. (The hook's own descriptors are close-on-exec already, and
//! the runtime's error pipe must stay open until `exec`, so nothing is closed before it.)

use std::io;

/// Makes every descriptor from 3 up close when the child `exec`s.
#[allow(unsafe_code)]
pub(crate) fn close_inherited() -> io::Result<()> {
    // SAFETY: close_range with integer arguments; it only sets flags on this process's table.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives the child a session of its own, without a controlling terminal, and makes it the leader
/// of its own process group there (what a spawner's `process_group(0)` asked for stays true).
///
/// A process group leader cannot start a session, and a spawner that asked for a group of the
/// child's own made it one before this hook runs: it rejoins `parent_group` (tether's group, in
/// the same session) for a moment, then starts its session.
#[allow(unsafe_code)]
pub(crate) fn own_session(parent_group: libc::pid_t) -> io::Result<()> {
    // SAFETY (each block): system calls with integer arguments; errors are read from errno.
    if unsafe { libc::setsid() } >= 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EPERM) {
        return Err(err);
    }
    if unsafe { libc::setpgid(0, parent_group) } != 0 || unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Replaces a terminal on stdin, stdout or stderr with `/dev/null`: without a controlling
/// terminal a child could still read the keys typed on one, or write a fake prompt to it.
#[allow(unsafe_code)]
pub(crate) fn no_terminal_on_stdio() -> io::Result<()> {
    let mut null = -1;
    for fd in 0..=2 {
        // SAFETY: isatty, open, dup2 and close on integer descriptors and a NUL-terminated
        // literal path; errors are read from errno.
        unsafe {
            if libc::isatty(fd) != 1 {
                continue;
            }
            if null < 0 {
                null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
                if null < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            // dup2 clears close-on-exec on the copy.
            if libc::dup2(null, fd) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    if null >= 0 {
        // SAFETY: a descriptor this function opened.
        unsafe { libc::close(null) };
    }
    Ok(())
}
