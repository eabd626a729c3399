//! Opening files that a tool reads or writes without ever blocking: a FIFO, a terminal or a
//! device in the workspace must not hang a tool call (and with it the turn, the judge or
//! `goal complete`).
//!
//! Every file a built-in tool opens goes through here. The open itself is non-blocking
//! (`O_NONBLOCK`: opening a FIFO for reading returns at once, for writing fails at once when no
//! one reads it), and the opened file must then be a regular file by `fstat` — checked on the
//! open descriptor, so a path swapped for a FIFO between a check and the open is still refused.
//! Regular files ignore `O_NONBLOCK`, so reads and writes of them behave as usual.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

use nix::fcntl::OFlag;

use crate::output::ToolOutput;
use crate::tools::io_error;

/// What a path turned out to be when a regular file was wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
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

/// Opening a regular file failed.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The path is not a regular file; nothing was read or written.
    NotRegular(Special),
    /// The open (or `fstat`) failed.
    Io(io::Error),
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
            OpenError::Io(err) => io_error(verb, path, err),
        }
    }
}

/// Opens `path` for reading; refused unless it is a regular file.
pub(crate) fn open_read(path: &Path) -> Result<File, OpenError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(OpenError::Io)?;
    check(&file)?;
    Ok(file)
}

/// Opens `path` for writing, creating it if missing and emptying it once it is known to be a
/// regular file; refused (with nothing changed) otherwise.
pub(crate) fn open_write(path: &Path) -> Result<File, OpenError> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            // A FIFO nobody reads: O_NONBLOCK makes the open fail instead of waiting.
            Some(code) if code == nix::errno::Errno::ENXIO as i32 => {
                OpenError::NotRegular(Special::Fifo)
            }
            _ => OpenError::Io(err),
        })?;
    check(&file)?;
    file.set_len(0).map_err(OpenError::Io)?;
    Ok(file)
}

/// The whole content of the regular file at `path`.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, OpenError> {
    let mut file = open_read(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(OpenError::Io)?;
    Ok(bytes)
}

/// Replaces the content of the regular file at `path` (creating it) with `bytes`.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), OpenError> {
    use std::io::Write as _;
    let mut file = open_write(path)?;
    file.write_all(bytes).map_err(OpenError::Io)
}

fn check(file: &File) -> Result<(), OpenError> {
    let ty = file.metadata().map_err(OpenError::Io)?.file_type();
    if ty.is_file() {
        return Ok(());
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
    use nix::sys::stat::Mode;

    #[test]
    fn a_fifo_is_refused_at_once_for_reading_and_writing() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, Mode::S_IRWXU).unwrap();
        assert!(matches!(
            read(&fifo),
            Err(OpenError::NotRegular(Special::Fifo))
        ));
        assert!(matches!(
            write(&fifo, b"x"),
            Err(OpenError::NotRegular(Special::Fifo))
        ));
        let out = read(&fifo).unwrap_err().output("read", "pipe");
        assert!(out.is_error);
        assert!(
            out.content.contains("a FIFO (named pipe)"),
            "{}",
            out.content
        );
    }

    #[test]
    fn regular_files_read_and_write_as_usual() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        write(&path, b"long content\n").unwrap();
        write(&path, b"short\n").unwrap();
        assert_eq!(read(&path).unwrap(), b"short\n");
        assert!(matches!(
            read(dir.path()),
            Err(OpenError::NotRegular(Special::Dir))
        ));
        assert!(matches!(
            read(&dir.path().join("missing")),
            Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::NotFound
        ));
    }
}
