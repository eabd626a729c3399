//! The child's own pseudo-terminals: a new `devpts` instance mounted over `/dev/pts` in its
//! mount namespace (and its `ptmx` over `/dev/ptmx`), so a program that needs a terminal (`script`,
//! `expect`, a test of a terminal program) can make one, while the person's terminals — tether's
//! own among them — are not there to open.
//!
//! Landlock attaches a rule to the inode it names, and checks the rules of the directories a path
//! walks up through, skipping the mount points a mount hides. A rule the parent made for
//! `/dev/pts` names the host's instance, which the child never sees; so the child adds the two
//! rules itself, once its instance is mounted, to the ruleset the parent built (a second handle
//! on it), before it restricts itself.

use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd};

use landlock::{AccessFs, BitFlags, RulesetCreated};

use crate::SandboxError;

/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// A private `devpts` for one child, with what it needs to be allowed there.
#[derive(Debug)]
pub(crate) struct Ptys {
    ruleset: OwnedFd,
    /// `/dev/ptmx` is a device node of its own (not a link into `/dev/pts`): the instance's
    /// `ptmx` is bound over it.
    bind_ptmx: bool,
}

/// What a child may do with its terminals: open, read, write and control them, list them.
fn dir_access() -> BitFlags<AccessFs> {
    AccessFs::ReadFile
        | AccessFs::WriteFile
        | AccessFs::ReadDir
        | AccessFs::IoctlDev
        | AccessFs::Truncate
}

/// The same for `ptmx`, a file.
fn file_access() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::Truncate
}

impl Ptys {
    /// Plans a private `devpts` whose rules go into `ruleset`; `None` where the system has no
    /// `/dev/pts` (the child then has no terminals at all).
    pub(crate) fn plan(ruleset: &RulesetCreated) -> Result<Option<Self>, SandboxError> {
        if !std::path::Path::new("/dev/pts").is_dir() {
            return Ok(None);
        }
        let handle = ruleset.try_clone().map_err(|source| SandboxError::Path {
            path: "/dev/pts".into(),
            source,
        })?;
        let Some(fd) = Option::<OwnedFd>::from(handle) else {
            return Ok(None);
        };
        let bind_ptmx = std::fs::symlink_metadata("/dev/ptmx").is_ok_and(|m| !m.is_symlink());
        Ok(Some(Ptys {
            ruleset: fd,
            bind_ptmx,
        }))
    }

    /// In the child, inside its mount namespace: mounts the instance and allows it.
    pub(crate) fn apply(&self) -> io::Result<()> {
        mount_private(self.bind_ptmx)?;
        allow(&self.ruleset, c"/dev/pts", libc::O_DIRECTORY, dir_access())?;
        allow(&self.ruleset, c"/dev/pts/ptmx", 0, file_access())
    }
}

/// Mounts a new `devpts` instance over `/dev/pts` (and its `ptmx` over `/dev/ptmx` when
/// `bind_ptmx`). Only in a mount namespace of the caller's own.
#[allow(unsafe_code)]
pub(crate) fn mount_private(bind_ptmx: bool) -> io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY (both blocks): mount with NUL-terminated literals; errors are read from errno.
    let mounted = unsafe {
        libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0600".as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(io::Error::last_os_error());
    }
    if bind_ptmx
        && unsafe {
            libc::mount(
                c"/dev/pts/ptmx".as_ptr(),
                c"/dev/ptmx".as_ptr(),
                none,
                libc::MS_BIND,
                std::ptr::null(),
            )
        } != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Adds a rule allowing `access` beneath `path` to `ruleset`.
#[allow(unsafe_code)]
fn allow(
    ruleset: &OwnedFd,
    path: &std::ffi::CStr,
    flags: libc::c_int,
    access: BitFlags<AccessFs>,
) -> io::Result<()> {
    // SAFETY: open with a NUL-terminated path; landlock_add_rule reads `attr`, which outlives
    // the call; the descriptor opened here is closed here.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let attr = PathBeneathAttr {
            allowed_access: access.bits(),
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            std::ptr::from_ref(&attr),
            0u32,
        );
        let err = io::Error::last_os_error();
        libc::close(fd);
        if r != 0 {
            return Err(err);
        }
    }
    Ok(())
}
