//! Small state files that several processes of one workspace read and replace: the ntfy sink's
//! last reply id. A reader must always find a whole value — the old one or the new one — and a
//! writer must never take another writer's half-written file for its own.
//!
//! So each write goes to a temporary file with a name of its own, drawn beside the target (the
//! same file system, so the rename is atomic), and is renamed over the target. Two writers
//! racing each rename a complete file; the last rename wins. Reads are bounded: the directory is
//! the workspace's, but a file someone else put there must not make a reader swallow it whole.

use std::io::{Read as _, Write as _};
use std::path::Path;

/// The most bytes [`read`] takes from a state file.
pub const MAX_READ: u64 = 4096;

/// Replaces `path` with `text` atomically, creating its directory when missing.
pub fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let prefix = path.file_name().map_or_else(
        || ".state".to_owned(),
        |n| format!(".{}", n.to_string_lossy()),
    );
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    // On failure the temporary file is removed when `persist`'s error drops it.
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The first [`MAX_READ`] bytes of `path` as text (lossy), or `None` when it cannot be read.
pub fn read(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_READ)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};

    use super::*;

    #[test]
    fn two_writers_racing_each_write_whole_values_and_leave_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("ntfy").join("reply.last-id"));
        let writers = 2;
        let rounds = 300;
        let start = Arc::new(Barrier::new(writers + 1));
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let (path, start) = (Arc::clone(&path), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    (0..rounds)
                        .map(|i| replace(&path, &format!("writer{w}id{i:04}{}", "x".repeat(512))))
                        .filter(Result::is_err)
                        .count()
                })
            })
            .collect();
        start.wait();
        // While they race, every read finds a whole value (once the first write landed).
        let mut torn = Vec::new();
        while !handles.iter().all(std::thread::JoinHandle::is_finished) {
            if let Some(text) = read(&path)
                && !(text.starts_with("writer") && text.ends_with(&"x".repeat(512)))
            {
                torn.push(text);
            }
        }
        let failed: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(failed, 0, "a write failed while another raced it");
        assert!(
            torn.is_empty(),
            "a reader saw a torn value: {:?}",
            torn.first()
        );
        let last = read(&path).unwrap();
        assert!(
            last.starts_with(&format!("writer0id{:04}", rounds - 1))
                || last.starts_with(&format!("writer1id{:04}", rounds - 1)),
            "the last value is one writer's last: {last}"
        );
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("reply.last-id")]);
    }

    #[test]
    fn reads_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, "a".repeat(1 << 20)).unwrap();
        assert_eq!(read(&path).unwrap().len() as u64, MAX_READ);
        assert_eq!(read(&dir.path().join("missing")), None);
    }
}
