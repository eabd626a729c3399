//! A PID namespace per run, so nothing the agent starts outlives the run.
//!
//! A process leaves its parent's process group with `setsid`, and its parent's tree with a
//! double fork or when its parent exits; no group kill, no subreaper keeps hold of it. A PID
//! namespace does: when its first process (its *init*, PID 1 there) dies, the kernel kills every
//! other process in it, whatever it did — `setsid`, `nohup`, a double fork, namespaces of its
//! own nested inside.
//!
//! [`RunNamespace::start`] makes one for a run: a small *holder* process, cloned from tether into
//! a new user namespace (which it owns) and a new PID namespace, where it is PID 1 and only
//! reaps the orphans the namespace hands it. Every sandboxed child of the run joins it (module
//! `enter`), so the agent's background processes live for the run — a server started in one
//! `bash` call is there in the next — and no longer:
//!
//! - [`RunNamespace::end`] (the run's end, or the namespace dropped) kills the holder, and with
//!   it everything in the namespace, and reaps it; nothing more starts in the namespace;
//! - tether dying in any way, SIGKILL included, ends the holder too: it waits on a pipe only
//!   tether holds the write end of, and exits when that pipe closes (a parent-death signal would
//!   follow the thread that made the holder, not tether);
//! - the agent cannot end the holder early: it is outside the Landlock domain of every sandboxed
//!   process (which may not signal or trace out of its domain), and a PID namespace's init does
//!   not even receive the signals it has no handler for from inside its namespace.
//!
//! The holder is a copy of tether that never `exec`s (see `fork`): it makes system calls only,
//! closes every descriptor but its own, leaves tether's session (no terminal, no Ctrl+C), and is
//! non-dumpable, as tether is, once tether has opened its namespaces.

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::sync::Mutex;
use std::time::Duration;

use crate::SandboxError;
use crate::enter::Entry;
use crate::fork::{self, Side};

/// How long the holder has to set its namespace up.
const SETUP_LIMIT: Duration = Duration::from_secs(10);

/// How long [`RunNamespace::end`] waits for the holder (and so every process of the namespace)
/// to be gone before leaving it to exit on its own.
const END_LIMIT: Duration = Duration::from_secs(10);

/// The byte tether writes once it has opened the holder's namespaces.
const OPENED: u8 = 1;

/// The pids of the holders this process runs (its children, which a sweep of its descendants
/// must spare: see `sweep`).
static HOLDERS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// The pids of the holders this process runs.
pub(crate) fn holder_pids() -> Vec<u32> {
    holders()
        .iter()
        .filter_map(|pid| u32::try_from(*pid).ok())
        .collect()
}

fn holders() -> std::sync::MutexGuard<'static, Vec<libc::pid_t>> {
    match HOLDERS.lock() {
        Ok(h) => h,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// A run's PID namespace: every process of the run's sandboxes runs inside it, and all of them
/// end with it. Share it between the run's sandboxes ([`crate::Sandbox::within`]).
#[derive(Debug)]
pub struct RunNamespace {
    live: Mutex<Option<Live>>,
}

/// The holder while it runs.
#[derive(Debug)]
struct Live {
    /// The holder's pid, in tether's PID namespace.
    pid: libc::pid_t,
    /// A pidfd naming the holder: signalled and waited for without fear of a reused pid.
    pidfd: OwnedFd,
    /// The write end of the holder's pipe: closed, the holder exits.
    alive: OwnedFd,
    /// The holder's user namespace, which owns its PID namespace.
    user_ns: OwnedFd,
    /// The PID namespace.
    pid_ns: OwnedFd,
}

impl RunNamespace {
    /// Starts the holder of a new PID namespace (with the user namespace that owns it).
    pub fn start() -> Result<Self, SandboxError> {
        let live = start_holder().map_err(SandboxError::Namespace)?;
        holders().push(live.pid);
        Ok(RunNamespace {
            live: Mutex::new(Some(live)),
        })
    }

    /// Kills everything in the namespace (the holder first: the kernel takes the rest) and waits
    /// for it to be gone, up to a bound. Nothing starts in the namespace afterwards. Does
    /// nothing the second time.
    pub fn end(&self) {
        let live = match self.live.lock() {
            Ok(mut live) => live.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(live) = live {
            live.end();
        }
    }

    /// Whether the namespace is still there to start processes in: not ended, its holder alive.
    pub fn is_running(&self) -> bool {
        let Ok(live) = self.live.lock() else {
            return false;
        };
        live.as_ref().is_some_and(Live::holder_alive)
    }

    /// What a child needs to join the namespace: its own copies of the namespaces' descriptors.
    /// Refused once the namespace has ended.
    pub(crate) fn entry(&self) -> Result<Entry, SandboxError> {
        let live = self.live.lock().map_err(|_| SandboxError::Ended)?;
        let Some(live) = live.as_ref().filter(|l| l.holder_alive()) else {
            return Err(SandboxError::Ended);
        };
        let copy = |fd: &OwnedFd| fd.try_clone().map_err(SandboxError::Namespace);
        Ok(Entry::new(copy(&live.user_ns)?, copy(&live.pid_ns)?))
    }
}

impl Drop for RunNamespace {
    fn drop(&mut self) {
        self.end();
    }
}

impl Live {
    fn holder_alive(&self) -> bool {
        crate::pidfd::signal(&self.pidfd, 0)
    }

    /// SIGKILL to the holder, then waits (bounded) for it to exit and reaps it.
    fn end(self) {
        holders().retain(|pid| *pid != self.pid);
        crate::pidfd::signal(&self.pidfd, libc::SIGKILL);
        drop(self.alive);
        if readable(&self.pidfd, END_LIMIT) {
            reap(&self.pidfd);
        }
    }
}

/// Whether `fd` turns readable within `limit` (a pidfd does when its process has exited).
#[allow(unsafe_code)]
fn readable(fd: &OwnedFd, limit: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(limit.as_millis()).unwrap_or(libc::c_int::MAX);
    loop {
        // SAFETY: one pollfd, which outlives the call.
        let r = unsafe { libc::poll(&mut poll, 1, ms) };
        if r >= 0 {
            return r > 0;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// Collects the exited process `pidfd` names (someone else reaping it first is fine).
#[allow(unsafe_code)]
fn reap(pidfd: &OwnedFd) {
    // SAFETY: waitid into a zeroed siginfo this function owns.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PIDFD,
            pidfd.as_raw_fd() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG,
        );
    }
}

/// A pipe whose two ends are close-on-exec and above the standard streams (a holder makes those
/// `/dev/null`).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = std::io::pipe()?;
    Ok((above_stdio(r.into())?, above_stdio(w.into())?))
}

/// `fd`, moved above 2 when it is a standard stream's number (tether started with one closed).
#[allow(unsafe_code)]
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor this function owns; the copy is owned below.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// What the holder needs, built before the clone: the id maps and its two pipe ends.
struct Setup {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Where the holder says it is ready (0) or why not (an errno).
    ready: RawFd,
    /// The read end of the pipe tether holds the write end of.
    alive: RawFd,
}

/// Clones the holder and waits for it to be ready; opens its namespaces.
fn start_holder() -> io::Result<Live> {
    #[allow(unsafe_code)]
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let (ready_r, ready_w) = pipe()?;
    let (alive_r, alive_w) = pipe()?;
    let setup = Setup {
        uid_map: format!("{uid} {uid} 1").into_bytes(),
        gid_map: format!("{gid} {gid} 1").into_bytes(),
        ready: ready_w.as_raw_fd(),
        alive: alive_r.as_raw_fd(),
    };
    let mut pidfd: libc::c_int = -1;
    let flags = (libc::CLONE_NEWUSER | libc::CLONE_NEWPID) as u64;
    #[allow(unsafe_code)]
    // SAFETY: the child runs `hold`, which makes system calls only on what `setup` holds and
    // ends with `_exit`.
    let side = unsafe { fork::clone3(flags, Some(&mut pidfd))? };
    let pid = match side {
        Side::Child => hold(&setup),
        Side::Parent(pid) => pid,
    };
    #[allow(unsafe_code)]
    // SAFETY: CLONE_PIDFD stored a new descriptor for the child in `pidfd`, owned from here.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    drop((ready_w, alive_r));
    ready(ready_r, &pidfd)?;
    let ns = |name: &str| File::open(format!("/proc/{pid}/ns/{name}")).map(OwnedFd::from);
    let (user_ns, pid_ns) = match ns("user").and_then(|user| Ok((user, ns("pid")?))) {
        Ok(both) => both,
        Err(e) => {
            kill(&pidfd);
            return Err(e);
        }
    };
    let live = Live {
        pid,
        pidfd,
        alive: alive_w,
        user_ns,
        pid_ns,
    };
    // Alive after they were opened: they are its namespaces, not those of a reused pid.
    if !live.holder_alive() {
        live.end();
        return Err(io::Error::other("the holder exited while starting"));
    }
    let opened = live
        .alive
        .try_clone()
        .and_then(|alive| File::from(alive).write_all(&[OPENED]));
    if let Err(e) = opened {
        live.end();
        return Err(e);
    }
    Ok(live)
}

/// Waits for the holder's word: ready, or the error that stopped it.
fn ready(from: OwnedFd, pidfd: &OwnedFd) -> io::Result<()> {
    if !readable(&from, SETUP_LIMIT) {
        kill(pidfd);
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the holder did not start in time",
        ));
    }
    let mut word = [0u8; 4];
    let read = File::from(from).read_exact(&mut word);
    match (read, i32::from_ne_bytes(word)) {
        (Ok(()), 0) => Ok(()),
        (Ok(()), errno) => {
            reap_exited(pidfd);
            Err(io::Error::from_raw_os_error(errno))
        }
        (Err(e), _) => {
            kill(pidfd);
            Err(e)
        }
    }
}

fn kill(pidfd: &OwnedFd) {
    crate::pidfd::signal(pidfd, libc::SIGKILL);
    reap_exited(pidfd);
}

fn reap_exited(pidfd: &OwnedFd) {
    if readable(pidfd, END_LIMIT) {
        reap(pidfd);
    }
}

/// The holder: PID 1 of the new namespace. Sets the namespace up, says so, and reaps orphans
/// until tether's end of its pipe closes. Never returns.
#[allow(unsafe_code)]
fn hold(setup: &Setup) -> ! {
    // Nothing of tether's stays open here but the two pipe ends: another holder's pipe must
    // close when tether does, whatever this one does.
    fork::close_all_but(&[setup.ready, setup.alive]);
    let say = |errno: i32| {
        // SAFETY: write of a 4-byte buffer to a descriptor this process holds.
        unsafe { libc::write(setup.ready, errno.to_ne_bytes().as_ptr().cast(), 4) };
    };
    if let Err(errno) = maps(setup) {
        say(errno);
        fork::exit_now(1);
    }
    say(0);
    // SAFETY (each block): system calls on integers and buffers this function owns.
    unsafe { libc::close(setup.ready) };
    // Until tether has opened the namespaces (which needs the holder dumpable), or is gone.
    let mut byte = 0u8;
    if unsafe { libc::read(setup.alive, std::ptr::from_mut(&mut byte).cast(), 1) } != 1 {
        fork::exit_now(0);
    }
    unsafe {
        // A copy of tether's memory, which holds keys: out of reach as tether's is.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::setsid();
    }
    if fork::null_stdio().is_err() {
        fork::exit_now(1);
    }
    fork::default_handlers();
    let chld = match child_signals() {
        Ok(fd) => fd,
        Err(_) => fork::exit_now(1),
    };
    reap_until_closed(setup.alive, chld)
}

/// In the holder: writes the namespace's id maps (the calling user only, as itself).
#[allow(unsafe_code)]
fn maps(setup: &Setup) -> Result<(), i32> {
    // SAFETY: prctl with integer arguments. A copy of a non-dumpable tether could not write its
    // own id maps.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) } != 0 {
        return Err(fork::errno());
    }
    crate::mounts::write_proc(c"/proc/self/setgroups", b"deny").map_err(|_| fork::errno())?;
    crate::mounts::write_proc(c"/proc/self/uid_map", &setup.uid_map).map_err(|_| fork::errno())?;
    crate::mounts::write_proc(c"/proc/self/gid_map", &setup.gid_map).map_err(|_| fork::errno())
}

/// In the holder: `SIGCHLD` blocked and read from a descriptor instead.
#[allow(unsafe_code)]
fn child_signals() -> io::Result<RawFd> {
    // SAFETY: sigset operations on a set this function owns; signalfd returns a new descriptor.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(fd)
    }
}

/// In the holder: reaps every exited child each time one exits, until `alive` closes (or is
/// written to), then exits — and the kernel kills the namespace.
#[allow(unsafe_code)]
fn reap_until_closed(alive: RawFd, chld: RawFd) -> ! {
    let mut fds = [
        libc::pollfd {
            fd: alive,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: chld,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let mut info = [0u8; size_of::<libc::signalfd_siginfo>()];
    loop {
        // SAFETY (each block): poll on two pollfds, read into a buffer of its size, waitpid
        // with no status wanted.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r < 0 {
            if fork::errno() == libc::EINTR {
                continue;
            }
            fork::exit_now(1);
        }
        if fds[0].revents != 0 {
            fork::exit_now(0);
        }
        if fds[1].revents != 0 {
            while unsafe { libc::read(chld, info.as_mut_ptr().cast(), info.len()) } > 0 {}
            while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        }
    }
}
