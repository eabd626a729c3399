#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use tether_tools::Workspace;

use super::{read, write};

/// `ws/` (with `src/lib.rs`, `.git/hooks/` and `.tether/`) and `outside/secret.txt` beside it.
fn fixture() -> (tempfile::TempDir, Workspace, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (root, outside) = (base.join("ws"), base.join("outside"));
    for d in ["src", ".git/hooks", ".tether", "inner"] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::create_dir_all(&outside).unwrap();
    fs::write(root.join("src/lib.rs"), "one\ntwo\nthree\n").unwrap();
    fs::write(outside.join("secret.txt"), "outside-bytes\n").unwrap();
    let ws = Workspace::new(&root).unwrap();
    (dir, ws, outside)
}

fn read_path(ws: &Workspace, path: impl Into<PathBuf>) -> Result<String, String> {
    read(ws, &ReadTextFileRequest::new("s", path)).map(|r| r.content)
}

fn write_path(ws: &Workspace, path: impl Into<PathBuf>, content: &str) -> Result<(), String> {
    write(ws, &WriteTextFileRequest::new("s", path, content)).map(|_| ())
}

#[test]
fn reads_and_writes_inside_the_workspace_through_links_that_stay_inside() {
    let (_dir, ws, _) = fixture();
    let root = ws.root().to_path_buf();
    assert_eq!(
        read_path(&ws, root.join("src/lib.rs")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let window = read(
        &ws,
        &ReadTextFileRequest::new("s", root.join("src/lib.rs"))
            .line(2)
            .limit(1),
    )
    .unwrap();
    assert_eq!(window.content, "two\n");
    write_path(&ws, root.join("new/dir/a.txt"), "hello\n").unwrap();
    assert_eq!(
        fs::read_to_string(root.join("new/dir/a.txt")).unwrap(),
        "hello\n"
    );
    symlink("inner", root.join("alias")).unwrap();
    write_path(&ws, root.join("alias/b.txt"), "via alias\n").unwrap();
    assert_eq!(
        read_path(&ws, root.join("inner/b.txt")).unwrap(),
        "via alias\n"
    );
}

#[test]
fn refuses_the_outside_tethers_state_git_and_a_fifo_at_once() {
    let (_dir, ws, outside) = fixture();
    let root = ws.root().to_path_buf();
    symlink(&outside, root.join("out")).unwrap();
    let err = read_path(&ws, root.join("out/secret.txt")).unwrap_err();
    assert!(err.contains("is outside the workspace"), "{err}");
    let err = write_path(&ws, root.join("out/new.txt"), "x").unwrap_err();
    assert!(err.contains("is outside the workspace"), "{err}");
    let err = write_path(&ws, root.join(".git/hooks/pre-commit"), "x").unwrap_err();
    assert!(err.contains("the repository's .git"), "{err}");
    let err = read_path(&ws, root.join(".tether/tether.db")).unwrap_err();
    assert!(err.contains("tether's own state"), "{err}");
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    // Before, a FIFO was opened blocking: this read would never have returned.
    let err = read_path(&ws, root.join("pipe")).unwrap_err();
    assert!(
        err.contains("a FIFO (named pipe), not a regular file"),
        "{err}"
    );
    let err = write_path(&ws, root.join("pipe"), "x").unwrap_err();
    assert!(err.contains("a FIFO (named pipe)"), "{err}");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
    assert_eq!(fs::read_dir(root.join(".git/hooks")).unwrap().count(), 0);
}

/// Swaps `dir` (a directory) with a symlink to `target`, in a loop until stopped.
#[test]
fn a_huge_file_is_refused_without_being_read() {
    // Six GiB, one line of text then a hole.
    let (_dir, ws, _) = fixture();
    let path = ws.root().join("huge.txt");
    let mut file = fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut file, b"text").unwrap();
    file.set_len(6 << 30).unwrap();
    for request in [
        ReadTextFileRequest::new("s", &path),
        ReadTextFileRequest::new("s", &path).line(1).limit(1),
    ] {
        assert_eq!(
            read(&ws, &request).map(|r| r.content),
            Err(format!(
                "`{}` is 6442450944 bytes, more than the 4194304 read through the protocol",
                path.display()
            ))
        );
    }
}

fn swap_dir(dir: PathBuf, target: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (aside, link) = (dir.with_extension("real"), dir.with_extension("link"));
        while !stop.load(Ordering::Relaxed) {
            let _ = fs::rename(&dir, &aside);
            let _ = symlink(&target, &link);
            let _ = fs::rename(&link, &dir);
            let _ = fs::remove_file(&dir);
            let _ = fs::rename(&aside, &dir);
        }
    })
}

/// Swaps the file `file` with a symlink to `target` (each renamed over the other), until stopped.
fn swap_file(file: PathBuf, target: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (fresh, link) = (file.with_extension("new"), file.with_extension("link"));
        while !stop.load(Ordering::Relaxed) {
            let _ = symlink(&target, &link);
            let _ = fs::rename(&link, &file);
            let _ = fs::write(&fresh, "inside\n");
            let _ = fs::rename(&fresh, &file);
        }
    })
}

#[test]
fn a_swapping_process_never_gets_a_read_or_a_write_outside() {
    let (_dir, ws, outside) = fixture();
    let root = ws.root().to_path_buf();
    fs::create_dir_all(root.join("d")).unwrap();
    fs::create_dir_all(root.join("h")).unwrap();
    fs::write(root.join("d/secret.txt"), "inside\n").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let racers = [
        swap_dir(root.join("d"), outside.clone(), stop.clone()),
        swap_dir(root.join("h"), root.join(".git/hooks"), stop.clone()),
        swap_file(root.join("f"), outside.join("secret.txt"), stop.clone()),
    ];
    let (mut worked, mut refused) = (0, 0);
    // Thousands of tries, for a few seconds at least: the windows are short.
    let until = Instant::now() + Duration::from_secs(2);
    for round in 0..100_000 {
        if round >= 1000 && Instant::now() > until {
            break;
        }
        for result in [
            read_path(&ws, root.join("d/secret.txt")),
            write_path(&ws, root.join("h/pre-commit"), "#!/bin/sh\n").map(|()| String::new()),
            write_path(&ws, root.join("d/new.txt"), "pwned\n").map(|()| String::new()),
            read_path(&ws, root.join("f")),
            write_path(&ws, root.join("f"), "pwned\n").map(|()| String::new()),
        ] {
            match result {
                Ok(text) => {
                    assert!(!text.contains("outside-bytes"), "read the outside: {text}");
                    worked += 1;
                }
                Err(_) => refused += 1,
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for racer in racers {
        racer.join().unwrap();
    }
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "outside-bytes\n"
    );
    assert!(!outside.join("new.txt").exists(), "written outside");
    assert!(!outside.join("pre-commit").exists());
    assert!(
        !Path::new(&root.join(".git/hooks/pre-commit")).exists(),
        "a hook was planted"
    );
    assert!(
        worked > 0 && refused > 0,
        "{worked} worked, {refused} refused"
    );
}
