#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::io::Read as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tempfile::TempDir;

use super::*;

const RESOLVERS: [Resolver; 2] = [Resolver::Best, Resolver::Walk];

/// `ws/` with `d/f` (`inside`), and `outside/` beside it with `f` (`outside`).
fn fixture() -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (ws, outside) = (base.join("ws"), base.join("outside"));
    fs::create_dir_all(ws.join("d")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(ws.join("d/f"), "inside").unwrap();
    fs::write(outside.join("f"), "outside").unwrap();
    (dir, ws, outside)
}

fn read(fd: OwnedFd) -> String {
    let mut text = String::new();
    fs::File::from(fd).read_to_string(&mut text).unwrap();
    text
}

fn swap(err: io::Error) {
    assert!(is_swap(&err), "expected ELOOP, got {err}");
}

#[test]
fn plain_paths_open_and_symlinks_anywhere_are_refused() {
    let (_dir, ws, outside) = fixture();
    symlink(&outside, ws.join("out")).unwrap();
    symlink("d", ws.join("alias")).unwrap();
    symlink("d/f", ws.join("file-alias")).unwrap();
    for resolver in RESOLVERS {
        let b = Beneath::with(&ws, resolver).unwrap();
        assert_eq!(
            read(b.open(Path::new("d/f"), OFlag::O_RDONLY).unwrap()),
            "inside"
        );
        b.open(Path::new(""), OFlag::O_RDONLY | OFlag::O_DIRECTORY)
            .unwrap();
        for path in ["out/f", "alias/f", "file-alias", "out"] {
            swap(b.open(Path::new(path), OFlag::O_RDONLY).unwrap_err());
        }
        swap(
            b.open(Path::new("alias"), OFlag::O_PATH | OFlag::O_DIRECTORY)
                .unwrap_err(),
        );
        let missing = b.open(Path::new("d/missing"), OFlag::O_RDONLY).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound, "{resolver:?}");
        let file_as_dir = b.open(Path::new("d/f/x"), OFlag::O_RDONLY).unwrap_err();
        assert_eq!(file_as_dir.raw_os_error(), Some(Errno::ENOTDIR as i32));
        for bad in ["../outside/f", "/etc/passwd", "d/../d/f"] {
            let err = b.open(Path::new(bad), OFlag::O_RDONLY).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
    }
}

#[test]
fn dir_makes_missing_directories_but_never_through_a_symlink() {
    let (_dir, ws, outside) = fixture();
    symlink(&outside, ws.join("out")).unwrap();
    for (i, resolver) in RESOLVERS.into_iter().enumerate() {
        let b = Beneath::with(&ws, resolver).unwrap();
        let new = format!("new{i}/a/b");
        b.dir(Path::new(&new), true).unwrap();
        assert!(ws.join(&new).is_dir());
        b.dir(Path::new("d"), false).unwrap();
        let missing = b.dir(Path::new("none/x"), false).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        swap(b.dir(Path::new("out/made"), true).unwrap_err());
        swap(b.dir(Path::new("out"), true).unwrap_err());
    }
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing made outside"
    );
}

/// Stops and joins the racer when dropped, even when an assertion fails.
struct Racer {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Racer {
    /// Swaps `ws/d` between the real directory and a symlink to `outside`, as fast as it can.
    fn start(ws: &Path, outside: &Path) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (ws, outside, flag) = (ws.to_path_buf(), outside.to_path_buf(), stop.clone());
        let thread = std::thread::spawn(move || {
            let (d, real, link) = (ws.join("d"), ws.join("d.real"), ws.join("d.link"));
            let mut swaps = 0;
            while !flag.load(Ordering::Relaxed) {
                let _ = fs::rename(&d, &real);
                let _ = symlink(&outside, &link);
                let _ = fs::rename(&link, &d);
                let _ = fs::remove_file(&d);
                let _ = fs::rename(&real, &d);
                swaps += 1;
            }
            swaps
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap())
    }
}

impl Drop for Racer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_racing_swap_is_an_error_never_the_file_outside() {
    for resolver in RESOLVERS {
        let (_dir, ws, outside) = fixture();
        let b = Beneath::with(&ws, resolver).unwrap();
        let racer = Racer::start(&ws, &outside);
        let (mut opened, mut refused) = (0, 0);
        for _ in 0..5000 {
            match b.open(Path::new("d/f"), OFlag::O_RDONLY) {
                Ok(fd) => {
                    assert_eq!(read(fd), "inside", "{resolver:?} opened the file outside");
                    opened += 1;
                }
                Err(err) => {
                    assert!(
                        is_swap(&err) || err.kind() == io::ErrorKind::NotFound,
                        "{resolver:?}: {err}"
                    );
                    refused += 1;
                }
            }
            match b.dir(Path::new("d/made"), true) {
                Ok(_) | Err(_) => {}
            }
        }
        let swaps = racer.finish();
        assert!(
            swaps > 0 && refused > 0,
            "{resolver:?}: the race ran ({swaps} swaps, {refused} refused, {opened} opened)"
        );
        assert_eq!(
            fs::read_dir(&outside).unwrap().count(),
            1,
            "{resolver:?}: nothing made outside"
        );
    }
}
