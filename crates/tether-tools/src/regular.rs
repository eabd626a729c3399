//! Opening the files a tool reads or writes: by descriptor beneath the workspace root, never
//! through a symlink ([`crate::beneath`]), and never blocking — a FIFO, a terminal or a device in
//! the workspace must not hang a tool call (and with it the turn, the judge or `goal complete`).
//!
//! Every file a built-in tool opens goes through here. The open itself is non-blocking
//! (`O_NONBLOCK`: opening a FIFO for reading returns at once, for writing fails at once when no
//! one reads it; `O_NOCTTY`: a terminal never becomes tether's), and the opened file must then
//! be a regular file by `fstat` — checked on the open descriptor, so a path swapped for a FIFO
//! between a check and the open is still refused. Regular files ignore `O_NONBLOCK`, so reads
//! and writes of them behave as usual.
//!
//! The paths given here are real paths that [`Workspace::resolve`] returned: canonical, so an
//! honest symlink inside the workspace was already followed (and checked) there, and opening
//! them needs no symlink at all. One that has become a symlink since is [`OpenError::Swapped`].

use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use crate::beneath::{Beneath, is_swap, open_in};
use crate::output::ToolOutput;
use crate::tools::io_error;
use crate::workspace::Workspace;

/// What a path turned out to be when a regular file was wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Special {
    /// A directory.
    Dir,
    /// A FIFO (named pipe).
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (a terminal, `/dev/zero`, …).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Something else.
    Other,
}

impl fmt::Display for Special {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Special::Dir => "a directory",
            Special::Fifo => "a FIFO (named pipe)",
            Special::Socket => "a socket",
            Special::CharDevice => "a character device",
            Special::BlockDevice => "a block device",
            Special::Other => "not a regular file",
        })
    }
}

/// Opening a regular file of the workspace failed; nothing was read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The path is not a regular file.
    #[error("it is {0}, not a regular file")]
    NotRegular(Special),
    /// A part of the path became a symlink after it was checked: it changed while being opened
    /// (a process swapping it, or an honest change at the wrong moment).
    #[error("it changed while it was being opened (a part of it is now a symbolic link)")]
    Swapped,
    /// A directory for a new file could not be made.
    #[error("its directory cannot be created: {0}")]
    Parent(io::Error),
    /// The open (or `fstat`) failed.
    #[error("{0}")]
    Io(io::Error),
}

impl From<io::Error> for OpenError {
    fn from(err: io::Error) -> Self {
        if is_swap(&err) {
            OpenError::Swapped
        } else if err.raw_os_error() == Some(Errno::EISDIR as i32) {
            OpenError::NotRegular(Special::Dir)
        } else {
            OpenError::Io(err)
        }
    }
}

impl OpenError {
    /// The error output for the model: `verb` `path` failed.
    pub(crate) fn output(&self, verb: &str, path: &str) -> ToolOutput {
        match self {
            OpenError::NotRegular(Special::Dir) => {
                ToolOutput::error(format!("cannot {verb} `{path}`: it is a directory"))
            }
            OpenError::NotRegular(special) => ToolOutput::error(format!(
                "cannot {verb} `{path}`: it is {special}, not a regular file; the file tools \
                 read and write regular files only"
            )),
            OpenError::Swapped => swapped(verb, path),
            OpenError::Parent(err) => io_error("create the directory for", path, err),
            OpenError::Io(err) => io_error(verb, path, err),
        }
    }
}

/// `verb` `path` failed because the path changed under the tool, said for the model.
pub(crate) fn swapped(verb: &str, path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "cannot {verb} `{path}`: it changed while it was being opened (a part of it is now a \
         symbolic link); nothing was read or written. The file tools follow only the symbolic \
         links they checked, so try again once nothing is changing it"
    ))
}

/// A file opened for writing: the file, emptied, and how long it was before (`None`: new).
#[derive(Debug)]
pub struct Written {
    /// The open file, empty, positioned at its start.
    pub file: File,
    /// Its length before it was emptied; `None` when the open created it.
    pub before: Option<u64>,
}

impl Workspace {
    /// Opens for reading the regular file at `real`, a path [`Workspace::resolve`] returned:
    /// by descriptor beneath the root, following no symlink, without blocking.
    pub fn open_read(&self, real: &Path) -> Result<File, OpenError> {
        let fd = self.beneath()?.open(self.below(real)?, read_flags())?;
        regular(fd)
    }

    /// Opens the existing regular file at `real` for reading and writing (an edit: read, then
    /// rewrite through the same descriptor), as [`Workspace::open_read`] does.
    pub fn open_edit(&self, real: &Path) -> Result<File, OpenError> {
        let fd = self
            .beneath()?
            .open(self.below(real)?, OFlag::O_RDWR | nonblocking())?;
        regular(fd)
    }

    /// Opens the file at `real` (a path [`Workspace::resolve_writable`] returned) for writing,
    /// making its missing directories, and empties it once it is known to be a regular file;
    /// refused (with nothing changed) otherwise. Every directory and the file itself are opened
    /// or made by descriptor, none of them through a symlink.
    pub fn open_write(&self, real: &Path) -> Result<Written, OpenError> {
        let rel = self.below(real)?;
        let Some(name) = rel.file_name() else {
            return Err(OpenError::NotRegular(Special::Dir));
        };
        let parent = rel.parent().unwrap_or(Path::new(""));
        let dir = self
            .beneath()?
            .dir(parent, true)
            .map_err(|err| match OpenError::from(err) {
                OpenError::Io(err) => OpenError::Parent(err),
                other => other,
            })?;
        let (fd, before) = create_or_open(&dir, name)?;
        let file = regular(fd)?;
        let before = match before {
            Existed::Yes => Some(file.metadata().map_err(OpenError::Io)?.len()),
            Existed::No => None,
        };
        file.set_len(0).map_err(OpenError::Io)?;
        Ok(Written { file, before })
    }

    fn beneath(&self) -> Result<Beneath, OpenError> {
        Beneath::new(self.root()).map_err(OpenError::Io)
    }

    /// `real` below the root; a path elsewhere was never resolved here.
    fn below<'a>(&self, real: &'a Path) -> Result<&'a Path, OpenError> {
        self.relative(real).map_err(OpenError::Io)
    }

    /// `real` relative to the root, or an error saying it is not inside the workspace.
    pub(crate) fn relative<'a>(&self, real: &'a Path) -> io::Result<&'a Path> {
        real.strip_prefix(self.root()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not inside the workspace", real.display()),
            )
        })
    }
}

/// Whether the file was there before the write opened it.
enum Existed {
    Yes,
    No,
}

/// Opens `name` in `dir` for writing, or creates it; never through a symlink.
fn create_or_open(dir: &OwnedFd, name: &OsStr) -> Result<(OwnedFd, Existed), OpenError> {
    let flags = OFlag::O_WRONLY | nonblocking();
    // Open or create, twice at most: a file that appears or vanishes in between is a change.
    for _ in 0..2 {
        match open_in(dir, name, flags, Mode::empty()) {
            Ok(fd) => return Ok((fd, Existed::Yes)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(write_error(err)),
        }
        let mode = Mode::from_bits_truncate(0o666);
        match open_in(dir, name, flags | OFlag::O_CREAT | OFlag::O_EXCL, mode) {
            Ok(fd) => return Ok((fd, Existed::No)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(write_error(err)),
        }
    }
    Err(OpenError::Swapped)
}

/// An open for writing failed: a FIFO nobody reads (`O_NONBLOCK` makes the open fail instead
/// of waiting), or as [`OpenError::from`] says.
fn write_error(err: io::Error) -> OpenError {
    match Errno::from_raw(err.raw_os_error().unwrap_or(0)) {
        Errno::ENXIO => OpenError::NotRegular(Special::Fifo),
        _ => err.into(),
    }
}

/// The flags of every open for reading.
pub(crate) fn read_flags() -> OFlag {
    OFlag::O_RDONLY | nonblocking()
}

fn nonblocking() -> OFlag {
    OFlag::O_NONBLOCK | OFlag::O_NOCTTY
}

/// Opens `name` in the directory `dir` for reading; refused unless it is a regular file.
pub(crate) fn open_read_in(dir: impl AsFd, name: &OsStr) -> Result<File, OpenError> {
    regular(open_in(dir, name, read_flags(), Mode::empty())?)
}

/// At most `max` bytes of `file`, and whether there was more.
pub(crate) fn read_bounded(file: File, max: u64) -> io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    let more = bytes.len() as u64 > max;
    if more {
        bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    }
    Ok((bytes, more))
}

/// `fd` as a file, if it is a regular one.
fn regular(fd: OwnedFd) -> Result<File, OpenError> {
    let file = File::from(fd);
    let ty = file.metadata().map_err(OpenError::Io)?.file_type();
    if ty.is_file() {
        return Ok(file);
    }
    Err(OpenError::NotRegular(if ty.is_dir() {
        Special::Dir
    } else if ty.is_fifo() {
        Special::Fifo
    } else if ty.is_socket() {
        Special::Socket
    } else if ty.is_char_device() {
        Special::CharDevice
    } else if ty.is_block_device() {
        Special::BlockDevice
    } else {
        Special::Other
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write as _;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    fn read(ws: &Workspace, real: &Path) -> Result<Vec<u8>, OpenError> {
        let file = ws.open_read(real)?;
        Ok(read_bounded(file, 1 << 20).map_err(OpenError::Io)?.0)
    }

    fn write(ws: &Workspace, real: &Path, bytes: &[u8]) -> Result<Option<u64>, OpenError> {
        let mut written = ws.open_write(real)?;
        written.file.write_all(bytes).map_err(OpenError::Io)?;
        Ok(written.before)
    }

    #[test]
    fn a_fifo_is_refused_at_once_for_reading_and_writing() {
        let (_dir, ws) = ws();
        let fifo = ws.root().join("pipe");
        nix::unistd::mkfifo(&fifo, Mode::S_IRWXU).unwrap();
        assert!(matches!(
            read(&ws, &fifo),
            Err(OpenError::NotRegular(Special::Fifo))
        ));
        assert!(matches!(
            write(&ws, &fifo, b"x"),
            Err(OpenError::NotRegular(Special::Fifo))
        ));
        assert!(matches!(
            ws.open_edit(&fifo),
            Err(OpenError::NotRegular(Special::Fifo))
        ));
        let out = read(&ws, &fifo).unwrap_err().output("read", "pipe");
        assert!(out.is_error);
        assert!(
            out.content.contains("a FIFO (named pipe)"),
            "{}",
            out.content
        );
    }

    #[test]
    fn regular_files_read_and_write_as_usual() {
        let (_dir, ws) = ws();
        let path = ws.root().join("a/b/a.txt");
        assert_eq!(write(&ws, &path, b"long content\n").unwrap(), None);
        assert_eq!(write(&ws, &path, b"short\n").unwrap(), Some(13));
        assert_eq!(read(&ws, &path).unwrap(), b"short\n");
        assert!(matches!(
            read(&ws, ws.root()),
            Err(OpenError::NotRegular(Special::Dir))
        ));
        assert!(matches!(
            write(&ws, &ws.root().join("a"), b"x"),
            Err(OpenError::NotRegular(Special::Dir))
        ));
        assert!(matches!(
            read(&ws, &ws.root().join("missing")),
            Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::NotFound
        ));
    }

    #[test]
    fn a_symlink_in_a_checked_path_is_a_swap_and_nothing_is_written_through_it() {
        let (dir, ws) = ws();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("d")).unwrap();
        let via = ws.root().join("d/secret");
        assert!(matches!(read(&ws, &via), Err(OpenError::Swapped)));
        assert!(matches!(write(&ws, &via, b"x"), Err(OpenError::Swapped)));
        assert!(matches!(
            write(&ws, &ws.root().join("d/new/file"), b"x"),
            Err(OpenError::Swapped)
        ));
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("f")).unwrap();
        assert!(matches!(
            read(&ws, &ws.root().join("f")),
            Err(OpenError::Swapped)
        ));
        assert!(matches!(
            write(&ws, &ws.root().join("f"), b"x"),
            Err(OpenError::Swapped)
        ));
        assert!(matches!(
            ws.open_edit(&ws.root().join("f")),
            Err(OpenError::Swapped)
        ));
        assert_eq!(
            std::fs::read(outside.path().join("secret")).unwrap(),
            b"secret"
        );
        assert!(!outside.path().join("new").exists());
        let out = OpenError::Swapped.output("write", "f");
        assert!(
            out.content.contains("nothing was read or written"),
            "{}",
            out.content
        );
    }

    #[test]
    fn reads_are_bounded() {
        let (_dir, ws) = ws();
        let path = ws.root().join("big");
        write(&ws, &path, &[b'x'; 100]).unwrap();
        let (bytes, more) = read_bounded(ws.open_read(&path).unwrap(), 10).unwrap();
        assert_eq!((bytes.len(), more), (10, true));
        let (bytes, more) = read_bounded(ws.open_read(&path).unwrap(), 100).unwrap();
        assert_eq!((bytes.len(), more), (100, false));
    }
}
