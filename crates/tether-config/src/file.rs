//! Reading the config file: bounded, and never blocking.
//!
//! `tether.toml` lies in the working tree, which the agent writes during a run, and tether reads
//! it again while the run goes on (the tether commands a sandboxed agent hands over, the settings
//! that bound the agent compared at a resume). A file the agent made one line of several GiB (a
//! sparse file costs no disk) or a FIFO must not bring the reading process down or hang it: the
//! file is opened non-blocking, must be a regular file, and is read up to [`MAX_CONFIG_BYTES`].

use std::fs::OpenOptions;
use std::io::{self, Read as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The largest config file read (1 MiB; a real one is a few KiB).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of the config file at `path`: refused when it is not a regular file or is larger
/// than [`MAX_CONFIG_BYTES`] (a missing file is `NotFound`, as for any read).
pub(crate) fn read(path: &Path) -> io::Result<String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    let too_large = |size: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is {size} bytes, more than the {MAX_CONFIG_BYTES} a config file may be"),
        )
    };
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large(text.len() as u64));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_huge_sparse_file_is_refused_without_being_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tether.toml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(6 << 30).unwrap();
        let err = read(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is 6442450944 bytes, more than the 1048576 a config file may be"
        );
    }

    #[test]
    fn a_fifo_is_refused_at_once_and_a_small_file_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.toml");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            read(&fifo).unwrap_err().to_string(),
            "it is not a regular file"
        );
        let path = dir.path().join("tether.toml");
        std::fs::write(&path, "[sandbox]\nnetwork = true\n").unwrap();
        assert_eq!(read(&path).unwrap(), "[sandbox]\nnetwork = true\n");
        assert_eq!(
            read(&dir.path().join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
