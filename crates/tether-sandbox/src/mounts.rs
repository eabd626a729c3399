//! What Landlock cannot do alone: places no path name may reach (`cover`), and a path beneath a
//! writable tree that must stay read-only (the working tree's `.git`) or out of sight (tether's
//! `.tether/`). The child gets a user and mount
//! namespace of its own, where such a path is bind-mounted read-only over itself, or covered by
//! an empty read-only tmpfs; with every capability then dropped and Landlock forbidding mount
//! changes, nothing in the child can undo it. The user namespace also cuts the child off from
//! tether's `/proc/<pid>/environ`, which root could otherwise read.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use crate::SandboxError;
use crate::cover::Covers;

/// The mount changes for one child, with every string the hook needs built in the parent.
#[derive(Debug)]
pub(crate) struct Mounts {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    covers: Covers,
    read_only: Vec<(CString, libc::c_ulong)>,
    hidden: Vec<CString>,
}

/// `path` as the C string a system call takes; a NUL byte in it is refused.
pub(crate) fn c_path(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::Path {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"),
    })
}

/// The flags a remount must keep: inside a user namespace the kernel refuses to clear the
/// `nosuid`, `nodev`, `noexec` and `ro` of the mount a bind came from.
fn locked_flags(path: &Path) -> Result<libc::c_ulong, SandboxError> {
    let c = c_path(path)?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    #[allow(unsafe_code)]
    // SAFETY: `c` is a NUL-terminated path and `st` room for one statvfs.
    let r = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if r != 0 {
        return Err(SandboxError::Path {
            path: path.to_path_buf(),
            source: io::Error::last_os_error(),
        });
    }
    #[allow(unsafe_code)]
    // SAFETY: statvfs succeeded, so it filled `st`.
    let flags = unsafe { st.assume_init() }.f_flag;
    let mut keep = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if flags & st_flag != 0 {
            keep |= ms_flag;
        }
    }
    Ok(keep)
}

impl Mounts {
    /// Plans the namespace: `covers`, then `read_only` and `hidden` paths that exist (a
    /// missing one has nothing to protect).
    pub(crate) fn plan<'a>(
        covers: Covers,
        read_only: impl Iterator<Item = &'a Path>,
        hidden: impl Iterator<Item = &'a Path>,
    ) -> Result<Self, SandboxError> {
        #[allow(unsafe_code)]
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut plan = Mounts {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            covers,
            read_only: Vec::new(),
            hidden: Vec::new(),
        };
        // A path beneath a cover, not put back, is out of sight already.
        for path in read_only.filter(|p| p.exists() && plan.covers.shows(p)) {
            plan.read_only.push((c_path(path)?, locked_flags(path)?));
        }
        for path in hidden.filter(|p| p.is_dir() && plan.covers.shows(p)) {
            plan.hidden.push(c_path(path)?);
        }
        Ok(plan)
    }

    /// In the child: a user and mount namespace of its own, the mounts, nothing shared back.
    #[allow(unsafe_code)]
    pub(crate) fn apply(&self) -> io::Result<()> {
        // SAFETY (every block below): system calls on NUL-terminated strings and byte buffers
        // built in the parent, which outlive the calls; errors are read from errno.
        // A child of a non-dumpable tether is non-dumpable until `exec`, and could not write
        // its own namespace's id maps.
        if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
            // Creating a user and mount namespace failed.
            return Err(io::Error::last_os_error());
        }
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)?;
        let none = std::ptr::null::<libc::c_char>();
        let no_data = std::ptr::null::<libc::c_void>();
        if unsafe {
            libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                no_data,
            )
        } != 0
        {
            // Making the mounts private failed.
            return Err(io::Error::last_os_error());
        }
        self.covers.apply()?;
        for (path, keep) in &self.read_only {
            let bound = unsafe {
                libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    no_data,
                )
            };
            let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | keep;
            if bound != 0 || unsafe { libc::mount(none, path.as_ptr(), none, flags, no_data) } != 0
            {
                // Mounting a tree read-only failed.
                return Err(io::Error::last_os_error());
            }
        }
        for path in &self.hidden {
            let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if unsafe {
                libc::mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags,
                    c"size=4k,mode=0500".as_ptr().cast(),
                )
            } != 0
            {
                // Covering a hidden tree failed.
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[allow(unsafe_code)]
pub(crate) fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: a NUL-terminated path, a buffer of `bytes.len()` bytes, a descriptor we close.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            // Opening /proc/self for the namespace's id maps failed.
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if n < 0 {
            // Writing the namespace's id maps failed.
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
