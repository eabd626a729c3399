//! Opening what a model named in the workspace by descriptor, following no symlink on the way.
//!
//! The file tools run in tether's own process, outside the sandbox, while processes the agent
//! started may still be running. A path that [`Workspace::resolve`](crate::Workspace::resolve)
//! checked can be swapped for a symlink before it is opened, and an open by path would follow
//! it out of the workspace, or into `.git/hooks`. So nothing here opens a path: the checked
//! path — canonical, every symlink it had already followed and checked — is opened from a
//! descriptor of the workspace root with no symlink allowed anywhere in it:
//!
//! - `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, where the kernel has it (Linux 5.6);
//! - otherwise (`ENOSYS`, or a seccomp filter that refuses it with `EPERM`) one `openat` per
//!   component with `O_NOFOLLOW`, each from the directory descriptor opened before it.
//!
//! Both are free of races: the kernel walks the directories itself, none of them may be a
//! symlink, and all are beneath the root. A component swapped for a symlink makes the open
//! fail (`ELOOP`, [`is_swap`]); it never lands elsewhere. A directory renamed into the path is
//! still a directory beneath the root, so it is as if the agent had put the file there itself.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, OpenHow, ResolveFlag, openat, openat2};
use nix::sys::stat::{Mode, SFlag, fstatat, mkdirat};

/// Set once `openat2` answered `ENOSYS`: the kernel has none, so walk from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How often `openat2` is retried when it answers `EAGAIN` (a rename elsewhere in the system
/// while it resolved), before walking instead.
const AGAIN_TRIES: usize = 3;

/// How a path is opened beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// `openat2` where the kernel has it, else the walk.
    Best,
    /// One `openat` per component (the fallback; tests use it directly).
    #[cfg(test)]
    Walk,
}

/// A descriptor of the workspace root, from which paths under it are opened.
#[derive(Debug)]
pub(crate) struct Beneath {
    root: OwnedFd,
    resolver: Resolver,
}

impl Beneath {
    /// Opens the root directory (canonical, so no symlink is followed).
    pub(crate) fn new(root: &Path) -> io::Result<Self> {
        Self::with(root, Resolver::Best)
    }

    pub(crate) fn with(root: &Path, resolver: Resolver) -> io::Result<Self> {
        let root = nix::fcntl::open(
            root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self { root, resolver })
    }

    /// Opens `rel` (a path below the root, `..`-free; empty is the root) with `flags`, no
    /// symlink allowed in any component.
    pub(crate) fn open(&self, rel: &Path, flags: OFlag) -> io::Result<OwnedFd> {
        check_components(rel)?;
        let path = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let flags = flags | OFlag::O_CLOEXEC;
        if self.resolver == Resolver::Best && !NO_OPENAT2.load(Ordering::Relaxed) {
            for _ in 0..AGAIN_TRIES {
                let how = OpenHow::new().flags(flags).resolve(
                    ResolveFlag::RESOLVE_BENEATH
                        | ResolveFlag::RESOLVE_NO_SYMLINKS
                        | ResolveFlag::RESOLVE_NO_MAGICLINKS,
                );
                match openat2(&self.root, path, how) {
                    Err(Errno::EAGAIN) => continue,
                    Err(Errno::ENOSYS) => {
                        NO_OPENAT2.store(true, Ordering::Relaxed);
                        break;
                    }
                    // A seccomp filter that does not know `openat2`; the walk answers for real.
                    Err(Errno::EPERM) => break,
                    Err(Errno::EXDEV) => return Err(Errno::ELOOP.into()),
                    other => return other.map_err(io::Error::from),
                }
            }
        }
        walk(&self.root, path, flags)
    }

    /// The directory `rel`, opened as a path descriptor; with `create`, it and every missing
    /// directory above it are made first (each one `mkdirat` in the descriptor of its parent).
    pub(crate) fn dir(&self, rel: &Path, create: bool) -> io::Result<OwnedFd> {
        match self.open(rel, dir_flags()) {
            Err(err) if create && err.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        check_components(rel)?;
        let mut dir = self.open(Path::new(""), dir_flags())?;
        for part in rel.components() {
            let Component::Normal(name) = part else {
                continue;
            };
            dir = match child_dir(&dir, name) {
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    match mkdirat(&dir, name, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(err) => return Err(err.into()),
                    }
                    child_dir(&dir, name)?
                }
                other => other?,
            };
        }
        Ok(dir)
    }
}

/// Opens `name`, one component, in `dir`, without following it if it is a symlink.
pub(crate) fn open_in(
    dir: impl AsFd,
    name: &OsStr,
    flags: OFlag,
    mode: Mode,
) -> io::Result<OwnedFd> {
    openat(
        dir,
        name,
        flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        mode,
    )
    .map_err(|err| {
        if err == Errno::EXDEV {
            Errno::ELOOP.into()
        } else {
            err.into()
        }
    })
}

/// Whether `err` says a symlink was met where the checked path had none: the path changed
/// between the check and the open.
pub(crate) fn is_swap(err: &io::Error) -> bool {
    err.raw_os_error() == Some(Errno::ELOOP as i32)
}

/// A directory opened only to open things in it (no read permission needed).
fn dir_flags() -> OFlag {
    OFlag::O_PATH | OFlag::O_DIRECTORY
}

/// The directory `name` in `dir`; a symlink there is `ELOOP`, as `openat2` says it.
fn child_dir(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    open_in(dir, name, dir_flags(), Mode::empty()).map_err(|err| swap_or(dir, name, err))
}

/// `O_DIRECTORY | O_NOFOLLOW` on a symlink fails with `ENOTDIR`, as on a file: `ELOOP` (a
/// swap) when `name` is not a plain non-directory now — a symlink, or a directory again, or gone
/// (it changed between the open and this look) — `err` otherwise (an honest file in the path).
fn swap_or(dir: &OwnedFd, name: &OsStr, err: io::Error) -> io::Error {
    if err.raw_os_error() != Some(Errno::ENOTDIR as i32) {
        return err;
    }
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => {
            let kind = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
            if kind == SFlag::S_IFLNK || kind == SFlag::S_IFDIR {
                Errno::ELOOP.into()
            } else {
                err
            }
        }
        Err(Errno::ENOENT) => Errno::ELOOP.into(),
        Err(_) => err,
    }
}

/// The fallback: every directory of `path` opened from the one before, the last component with
/// `flags`, none of them followed if it is a symlink.
fn walk(root: &OwnedFd, path: &Path, flags: OFlag) -> io::Result<OwnedFd> {
    let mut names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let Some(last) = names.pop() else {
        return Ok(openat(root, ".", flags, Mode::empty())?);
    };
    let mut dir: Option<OwnedFd> = None;
    for name in names {
        let next = child_dir(dir.as_ref().unwrap_or(root), name)?;
        dir = Some(next);
    }
    let parent = dir.as_ref().unwrap_or(root);
    let fd =
        open_in(parent, last, flags, Mode::empty()).map_err(|err| swap_or(parent, last, err))?;
    // `O_PATH | O_NOFOLLOW` opens a symlink itself instead of failing: refuse it as `openat2`
    // does.
    if flags.contains(OFlag::O_PATH) && is_symlink(&fd) {
        return Err(Errno::ELOOP.into());
    }
    Ok(fd)
}

fn is_symlink(fd: &OwnedFd) -> bool {
    nix::sys::stat::fstat(fd)
        .is_ok_and(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK)
}

/// Refuses a path that is not plain names below the root.
fn check_components(rel: &Path) -> io::Result<()> {
    if rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a path below the workspace root", rel.display()),
        ))
    }
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
