//! Reading a small file someone else may control (an ignore list) in process: a regular file
//! only, opened without blocking (a FIFO put in its place answers at once) and never past a cap.

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use nix::fcntl::OFlag;

/// The bytes of the regular file at `path` (a symlink followed when `follow`), at most `cap`
/// of them; `None` when it is missing, not a regular file or unreadable. A longer file gives
/// its first `cap` bytes up to the last whole line.
pub(crate) fn read(path: &Path, cap: u64, follow: bool) -> Option<Vec<u8>> {
    let mut flags = OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    if !follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    let file = File::options()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 == cap
        && let Some(end) = bytes.iter().rposition(|b| *b == b'\n')
    {
        bytes.truncate(end + 1);
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_read_and_never_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ignore");
        std::fs::write(&file, "a\nbb\nccc\n").unwrap();
        assert_eq!(read(&file, 100, false).unwrap(), b"a\nbb\nccc\n");
        assert_eq!(read(&file, 6, false).unwrap(), b"a\nbb\n", "whole lines");
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(read(&fifo, 100, true), None, "a FIFO, at once");
        assert_eq!(read(dir.path(), 100, true), None, "a directory");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read(&link, 100, false), None, "not through a symlink");
        assert!(read(&link, 100, true).is_some(), "followed when asked");
        assert_eq!(read(&dir.path().join("missing"), 100, true), None);
    }
}
