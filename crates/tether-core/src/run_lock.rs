//! Whether a run's loop is alive: an exclusive `flock` on `.tether/runs/<run>/lock`.
//!
//! The kernel releases the lock when the process dies, even by SIGKILL, so a run whose journal
//! says "running" but whose lock is free was interrupted, and `tether resume` may continue it.
//! Two processes can never drive the same run at once.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Seek as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// The most bytes of a lock file read for the pid it records.
const MAX_RECORDED: u64 = 64;

/// A held run lock; released on drop.
#[derive(Debug)]
pub struct RunLock {
    _lock: Flock<File>,
    previous: u32,
}

/// The lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process drives this run; stop it first (`tether cancel`) or wait.
    #[error("run is being driven by another tether process (pid {pid})")]
    Held {
        /// The pid recorded by the holder (0 if unreadable).
        pid: u32,
    },
    /// The lock file could not be opened.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
}

fn open(path: &Path) -> Result<File, LockError> {
    let io = |cause| LockError::Io {
        path: path.to_owned(),
        cause,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)
}

fn recorded_pid(file: &mut File) -> u32 {
    let mut s = String::new();
    let _ = file.take(MAX_RECORDED).read_to_string(&mut s);
    s.trim().parse().unwrap_or(0)
}

impl RunLock {
    /// Takes the lock at `path`, recording this process's pid in it. It does not wait for a live
    /// holder; it only retries briefly, so a concurrent [`RunLock::holder`] probe cannot make it
    /// fail.
    pub fn acquire(path: &Path) -> Result<RunLock, LockError> {
        let io = |cause| LockError::Io {
            path: path.to_owned(),
            cause,
        };
        let mut file = open(path)?;
        for attempt in 0..5 {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(mut lock) => {
                    let previous = recorded_pid(&mut lock);
                    lock.rewind().map_err(io)?;
                    lock.set_len(0).map_err(io)?;
                    lock.rewind().map_err(io)?;
                    write!(lock, "{}", std::process::id()).map_err(io)?;
                    lock.flush().map_err(io)?;
                    return Ok(RunLock {
                        _lock: lock,
                        previous,
                    });
                }
                Err((f, _)) if attempt < 4 => {
                    file = f;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err((mut f, _)) => {
                    return Err(LockError::Held {
                        pid: recorded_pid(&mut f),
                    });
                }
            }
        }
        Err(LockError::Held { pid: 0 })
    }

    /// The pid the lock file recorded before this process took it: the last process that drove
    /// the run (0 when none was recorded). When a run is taken up again after its driver was
    /// killed, what that driver left running is found by this pid.
    pub fn previous(&self) -> u32 {
        self.previous
    }

    /// The pid of the live process holding the lock at `path`, if one does. Probes with a shared
    /// lock and writes nothing.
    /// A path that is not a regular file (a FIFO the agent put there) holds nobody, and is
    /// opened without blocking.
    pub fn holder(path: &Path) -> Option<u32> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(path)
            .ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        match Flock::lock(file, FlockArg::LockSharedNonblock) {
            Ok(_released_on_drop) => None,
            Err((mut f, _)) => Some(recorded_pid(&mut f)),
        }
    }
}
