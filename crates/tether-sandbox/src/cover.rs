//! The places a child must not reach even by a path name: `/tmp`, `/var/tmp`, `/run`,
//! `/dev/shm` and the home directory, covered by an empty tmpfs in the child's mount
//! namespace, with what the policy grants beneath them mounted back in place.
//!
//! Landlock checks what is opened, not what is connected to: before its ABI 9 a child could
//! connect to any Unix socket whose path it knows, unreadable directory or not — a terminal
//! multiplexer's (`/tmp/tmux-<uid>/default`: typing into the person's terminals), the session
//! bus (`/run/user/<uid>/bus`: starting a process outside the sandbox), `docker.sock`, an SSH or
//! GPG agent, another run's bridge. Those sockets live in these places; covered, they are not
//! there to connect to. What the policy grants there (the working tree, the private temporary
//! directory, toolchains in the home directory, the resolver's files in `/run`) is cloned before
//! the cover goes on and moved back onto it: the same files, so the Landlock rules made for them
//! hold.

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};

use crate::SandboxError;
use crate::mounts::c_path;

/// Covered in every child (when they are directories): where sockets and other users' and
/// processes' files live.
const SYSTEM_COVERED: &[&str] = &["/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"];

/// The most paths put back beneath the covers (the hook keeps their clones on its stack).
const MAX_KEPT: usize = 256;

/// `OPEN_TREE_CLONE`.
const OPEN_TREE_CLONE: libc::c_uint = 1;
/// `MOVE_MOUNT_F_EMPTY_PATH`.
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;

/// A granted path beneath a cover, put back in place.
#[derive(Debug)]
struct Kept {
    path: CString,
    dir: bool,
    /// The directories to make on the cover before it, outermost first.
    parents: Vec<CString>,
}

/// The covers of one child.
#[derive(Debug, Default)]
pub(crate) struct Covers {
    roots: Vec<CString>,
    kept: Vec<Kept>,
    /// The same, as paths (for the parent's questions).
    root_paths: Vec<PathBuf>,
    kept_paths: Vec<PathBuf>,
}

/// `path` with its links resolved, if it exists.
fn real(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

impl Covers {
    /// Plans covering the system's places and `extra` (the home directory), keeping `granted`
    /// (links resolved) and `exact` (paths opened without following any link: taken as they
    /// are, never resolved again) beneath them. A place that is granted itself, or lies beneath
    /// a granted path, is not covered (what is granted stays whole).
    pub(crate) fn plan<'a>(
        extra: impl Iterator<Item = &'a Path>,
        granted: impl Iterator<Item = &'a Path>,
        exact: impl Iterator<Item = &'a Path>,
    ) -> Result<Self, SandboxError> {
        let granted: Vec<PathBuf> = granted
            .filter_map(real)
            .chain(exact.map(Path::to_path_buf))
            .collect();
        let mut roots: Vec<PathBuf> = Vec::new();
        for root in SYSTEM_COVERED.iter().map(Path::new).chain(extra) {
            let Some(root) = real(root).filter(|r| r.is_dir()) else {
                continue;
            };
            if root == Path::new("/") || granted.iter().any(|g| root.starts_with(g)) {
                continue;
            }
            roots.push(root);
        }
        roots.sort();
        roots.dedup();
        // A place beneath another is covered with it.
        let outer: Vec<PathBuf> = roots
            .iter()
            .filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
            .cloned()
            .collect();
        let mut kept: Vec<(PathBuf, &PathBuf)> = Vec::new();
        for g in &granted {
            if let Some(root) = outer.iter().find(|r| g.starts_with(r) && g != *r) {
                kept.push((g.clone(), root));
            }
        }
        kept.sort();
        kept.dedup_by(|a, b| a.0 == b.0);
        // Within a kept path is kept with it.
        let inner: Vec<(PathBuf, &PathBuf)> = kept
            .iter()
            .filter(|(p, _)| !kept.iter().any(|(o, _)| o != p && p.starts_with(o)))
            .cloned()
            .collect();
        if inner.len() > MAX_KEPT {
            return Err(SandboxError::Path {
                path: inner[MAX_KEPT].0.clone(),
                source: io::Error::other(format!(
                    "more than {MAX_KEPT} granted paths beneath /tmp, /run and the home directory"
                )),
            });
        }
        let mut covers = Covers::default();
        for root in &outer {
            covers.roots.push(c_path(root)?);
        }
        covers.root_paths = outer.clone();
        covers.kept_paths = inner.iter().map(|(p, _)| p.clone()).collect();
        for (path, root) in inner {
            let mut parents = Vec::new();
            let mut at = root.clone();
            if let Ok(rest) = path.strip_prefix(root)
                && let Some(within) = rest.parent()
            {
                for part in within.components() {
                    at.push(part);
                    parents.push(c_path(&at)?);
                }
            }
            covers.kept.push(Kept {
                dir: path.is_dir(),
                path: c_path(&path)?,
                parents,
            });
        }
        Ok(covers)
    }

    /// Whether `path` is there in the child: beneath no cover, or beneath what a cover keeps.
    pub(crate) fn shows(&self, path: &Path) -> bool {
        let path = real(path).unwrap_or_else(|| path.to_path_buf());
        !self.root_paths.iter().any(|r| path.starts_with(r))
            || self.kept_paths.iter().any(|k| path.starts_with(k))
    }

    /// In the child, inside its own mount namespace: clones what is kept, covers the places,
    /// puts the clones back, and enters the working directory again (the old one lies beneath
    /// a cover).
    #[allow(unsafe_code)]
    pub(crate) fn apply(&self) -> io::Result<()> {
        if self.roots.is_empty() {
            return Ok(());
        }
        let mut cwd = [0 as libc::c_char; 4096];
        let mut clones = [-1 as libc::c_int; MAX_KEPT];
        // SAFETY (every block): system calls on NUL-terminated strings built in the parent and
        // buffers on this stack, which outlive the calls; descriptors opened here are closed
        // here; errors are read from errno.
        if unsafe { libc::getcwd(cwd.as_mut_ptr(), cwd.len()) }.is_null() {
            return Err(io::Error::last_os_error());
        }
        let result = (|| {
            for (clone, kept) in clones.iter_mut().zip(&self.kept) {
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_open_tree,
                        libc::AT_FDCWD,
                        kept.path.as_ptr(),
                        OPEN_TREE_CLONE
                            | libc::O_CLOEXEC as libc::c_uint
                            | libc::AT_RECURSIVE as libc::c_uint,
                    )
                };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                *clone = fd as libc::c_int;
            }
            for root in &self.roots {
                let flags = libc::MS_NOSUID | libc::MS_NODEV;
                if unsafe {
                    libc::mount(
                        c"tmpfs".as_ptr(),
                        root.as_ptr(),
                        c"tmpfs".as_ptr(),
                        flags,
                        c"mode=0755".as_ptr().cast(),
                    )
                } != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            for (clone, kept) in clones.iter().zip(&self.kept) {
                put_back(*clone, kept)?;
            }
            if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })();
        for fd in clones.iter().filter(|fd| **fd >= 0) {
            unsafe { libc::close(*fd) };
        }
        result
    }
}

/// Makes `kept`'s place on its cover and moves `clone` onto it.
#[allow(unsafe_code)]
fn put_back(clone: libc::c_int, kept: &Kept) -> io::Result<()> {
    // SAFETY: as in `Covers::apply`.
    unsafe {
        for dir in &kept.parents {
            if libc::mkdir(dir.as_ptr(), 0o755) != 0
                && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
            {
                return Err(io::Error::last_os_error());
            }
        }
        if kept.dir {
            if libc::mkdir(kept.path.as_ptr(), 0o755) != 0
                && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
            {
                return Err(io::Error::last_os_error());
            }
        } else {
            let fd = libc::open(
                kept.path.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::close(fd);
        }
        if libc::syscall(
            libc::SYS_move_mount,
            clone,
            c"".as_ptr(),
            libc::AT_FDCWD,
            kept.path.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
