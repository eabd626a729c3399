//! What a sandboxed child may read, write and reach.

use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use crate::child::Prepared;
use crate::{SandboxError, Support};

/// The trees of the system every child may read (and execute from) when they exist: programs,
/// libraries, configuration and the kernel's views. Not `/tmp`, `/home`, `/root`, `/var` or
/// `/run`: other users' files, other runs, stores and mounted secrets live there; nor `/dev`
/// whole (see [`DEVICES_READ`]).
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/proc",
    "/sys",
    "/run/systemd/resolve",
    "/run/resolvconf",
    "/var/lib/dpkg/alternatives",
];

/// The devices every child may read: the sources programs expect, and `/dev/tty`, which a child
/// without a controlling terminal opens to learn it has none (`ENXIO`). Not the rest of `/dev`:
/// as root the disks, the consoles and the input devices would be readable. The child's own
/// pseudo-terminals are allowed apart (see `ptys`).
const DEVICES_READ: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The devices every child may write: the sinks programs expect. Not `/dev/tty` nor the host's
/// `/dev/pts`: those are the person's terminals.
const DEVICES_WRITE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// The system trees a child may read, for a person (`tether doctor`, the README).
pub fn system_readable() -> &'static [&'static str] {
    SYSTEM_READ
}

/// What a sandboxed child may do. Everything not granted is denied: reading outside
/// [`Policy::read`] and the system trees, writing outside [`Policy::write`], signalling processes
/// outside the sandbox, and (unless [`Policy::network`]) the network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    read: Vec<PathBuf>,
    optional_read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    unlinked_read: Vec<PathBuf>,
    unlinked_write: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
    covered: Vec<PathBuf>,
    network: bool,
}

impl Policy {
    /// Nothing beyond the system trees, no network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lets the child read (and execute) beneath `path`, which must exist.
    #[must_use]
    pub fn read(mut self, path: impl Into<PathBuf>) -> Self {
        self.read.push(path.into());
        self
    }

    /// Lets the child read beneath `path` when it exists (a toolchain under `$HOME`).
    #[must_use]
    pub fn read_if_present(mut self, path: impl Into<PathBuf>) -> Self {
        self.optional_read.push(path.into());
        self
    }

    /// Lets the child read, create, change and remove anything beneath `path`, which must exist.
    #[must_use]
    pub fn write(mut self, path: impl Into<PathBuf>) -> Self {
        self.write.push(path.into());
        self
    }

    /// Lets the child read beneath `path` when it exists and no part of it is a symbolic link:
    /// for a path inside a tree the child can write, where it could plant a link to `/` in its
    /// place. At each spawn it is opened without following any link; with a link anywhere on
    /// it, or nothing there, nothing is granted. `path` must be absolute, without `.` or `..`.
    #[must_use]
    pub fn read_unlinked(mut self, path: impl Into<PathBuf>) -> Self {
        self.unlinked_read.push(path.into());
        self
    }

    /// [`Policy::read_unlinked`], for writing: lets the child read, create, change and remove
    /// anything beneath `path` when it exists and no part of it is a symbolic link.
    #[must_use]
    pub fn write_unlinked(mut self, path: impl Into<PathBuf>) -> Self {
        self.unlinked_write.push(path.into());
        self
    }

    /// Keeps `path` read-only even beneath a writable tree (the working tree's `.git`): it is
    /// bind-mounted read-only over itself in the child's own mount namespace. Nothing to do
    /// when it does not exist.
    #[must_use]
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push(path.into());
        self
    }

    /// Hides the directory `path` even beneath a writable tree (tether's `.tether/`): the child
    /// sees an empty read-only directory there. Nothing to do when it does not exist.
    #[must_use]
    pub fn hide(mut self, path: impl Into<PathBuf>) -> Self {
        self.hidden.push(path.into());
        self
    }

    /// Covers the directory `path` as `/tmp` and `/run` are covered in every child: nothing
    /// beneath it is there, not even a Unix socket to connect to, but what the policy grants
    /// (the home directory: an SSH or GPG agent's socket, a toolchain's parts kept). Nothing to
    /// do when it does not exist, or is granted itself.
    #[must_use]
    pub fn cover(mut self, path: impl Into<PathBuf>) -> Self {
        self.covered.push(path.into());
        self
    }

    /// The paths kept read-only beneath writable trees.
    pub fn read_only_paths(&self) -> impl Iterator<Item = &Path> {
        self.read_only.iter().map(PathBuf::as_path)
    }

    /// The directories hidden from the child.
    pub fn hidden_paths(&self) -> impl Iterator<Item = &Path> {
        self.hidden.iter().map(PathBuf::as_path)
    }

    /// Lets the child reach the network (or not).
    #[must_use]
    pub fn network(mut self, on: bool) -> Self {
        self.network = on;
        self
    }

    /// The trees the child may read, beyond the system's (those [`Policy::read_unlinked`] named
    /// included, as they would be granted when no link stands on them).
    pub fn readable(&self) -> impl Iterator<Item = &Path> {
        self.read
            .iter()
            .chain(&self.optional_read)
            .chain(&self.unlinked_read)
            .map(PathBuf::as_path)
    }

    /// The trees the child may write (those [`Policy::write_unlinked`] named included).
    pub fn writable(&self) -> impl Iterator<Item = &Path> {
        self.write
            .iter()
            .chain(&self.unlinked_write)
            .map(PathBuf::as_path)
    }

    /// Whether the child may reach the network.
    pub fn has_network(&self) -> bool {
        self.network
    }

    /// Builds the kernel objects for one child, in tether's process: refused when `support`
    /// says the kernel cannot enforce all of it, or a required path is missing.
    pub fn prepare(&self, support: Support) -> Result<Prepared, SandboxError> {
        support.check()?;
        let abi = ABI::V6;
        let read = AccessFs::from_read(abi);
        let all = AccessFs::from_all(abi);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(all)?
            .scope(Scope::from_all(abi))?;
        if !self.network {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
        }
        let mut created = ruleset.create()?;
        for path in SYSTEM_READ
            .iter()
            .chain(DEVICES_READ)
            .map(Path::new)
            .chain(self.optional_read.iter().map(PathBuf::as_path))
        {
            if let Some(rule) = beneath(path, read, false)? {
                created = created.add_rule(rule)?;
            }
        }
        for path in &self.read {
            if let Some(rule) = beneath(path, read, true)? {
                created = created.add_rule(rule)?;
            }
        }
        for path in DEVICES_WRITE.iter().map(Path::new) {
            if let Some(rule) = beneath(path, all, false)? {
                created = created.add_rule(rule)?;
            }
        }
        for path in &self.write {
            if let Some(rule) = beneath(path, all, true)? {
                created = created.add_rule(rule)?;
            }
        }
        // Opened once, here: the rule and the covers below see the same file, whatever the
        // child does to the path meanwhile.
        let mut unlinked = Vec::new();
        for (paths, access) in [(&self.unlinked_read, read), (&self.unlinked_write, all)] {
            for path in paths {
                if let Some(rule) = beneath_unlinked(path, access)? {
                    created = created.add_rule(rule)?;
                    unlinked.push(path.as_path());
                }
            }
        }
        let filter = if self.network {
            None
        } else {
            Some(crate::child::network_filter()?)
        };
        let granted = SYSTEM_READ
            .iter()
            .chain(DEVICES_READ)
            .chain(DEVICES_WRITE)
            .map(Path::new)
            .chain(
                self.read
                    .iter()
                    .chain(&self.optional_read)
                    .map(PathBuf::as_path),
            )
            .chain(self.write.iter().map(PathBuf::as_path));
        let covers = crate::cover::Covers::plan(
            self.covered.iter().map(PathBuf::as_path),
            granted,
            unlinked.into_iter(),
        )?;
        let writable: Vec<PathBuf> = self
            .writable()
            .filter_map(|w| std::fs::canonicalize(w).ok())
            .collect();
        let read_only = self
            .read_only_paths()
            .filter(|p| kept_read_only(p, &writable));
        let mounts = crate::mounts::Mounts::plan(covers, read_only, self.hidden_paths())?;
        let ptys = crate::ptys::Ptys::plan(&created)?;
        Ok(Prepared::new(mounts, ptys, created, filter))
    }
}

/// Whether the read-only path `path` is made read-only: only where it lies beneath one of the
/// `writable` trees (elsewhere the child cannot write it anyway), and never when it is a
/// symbolic link — a mount follows links, and a link in a writable tree is the child's to
/// replace (a `.git` it made, pointing at `/`).
fn kept_read_only(path: &Path, writable: &[PathBuf]) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink())
        && std::fs::canonicalize(path)
            .is_ok_and(|real| writable.iter().any(|w| real.starts_with(w)))
}

/// A rule for `path` with `access` (narrowed to what applies to a file when it is one), `path`
/// opened without following any symbolic link on it; `None` when it is missing or a link
/// stands on it.
fn beneath_unlinked(
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<Option<PathBeneath<OwnedFd>>, SandboxError> {
    let error = |source| SandboxError::Path {
        path: path.to_path_buf(),
        source,
    };
    let c = crate::mounts::c_path(path)?;
    #[allow(unsafe_code)]
    // SAFETY: `open_how` is plain integers, for which zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    #[allow(unsafe_code)]
    // SAFETY: a NUL-terminated path and an `open_how` of the size passed, both outliving the
    // call; the descriptor returned is owned here.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &raw const how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR) => Ok(None),
            _ => Err(error(err)),
        };
    }
    #[allow(unsafe_code)]
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    let meta = std::fs::File::from(fd.try_clone().map_err(error)?)
        .metadata()
        .map_err(error)?;
    let access = if meta.is_dir() {
        access
    } else {
        access & AccessFs::from_file(ABI::V6)
    };
    Ok(Some(PathBeneath::new(fd, access)))
}

/// A rule for `path` with `access` (narrowed to what applies to a file when it is one); `None`
/// for a missing optional path.
fn beneath(
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
    required: bool,
) -> Result<Option<PathBeneath<PathFd>>, SandboxError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(_) if !required => return Ok(None),
        Err(source) => {
            return Err(SandboxError::Path {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let fd = PathFd::new(path).map_err(|e| SandboxError::Path {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let access = if meta.is_dir() {
        access
    } else {
        access & AccessFs::from_file(ABI::V6)
    };
    Ok(Some(PathBeneath::new(fd, access)))
}
