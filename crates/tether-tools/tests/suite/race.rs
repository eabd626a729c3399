//! The file tools against a process swapping what they were asked about: a thread renames a
//! file, a directory and a directory of new files back and forth with symlinks out of the
//! workspace and into `.git/hooks`, as fast as it can, while `read`, `write`, `edit`, `grep` and
//! `ls` are called thousands of times. A call may fail (the path changed under it); it never
//! reads, lists or writes a byte outside, and nothing lands in `.git/hooks`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use serde_json::json;

use super::{Fixture, tree};

/// How many rounds of calls race the swapper.
const ROUNDS: usize = 1000;

/// Swaps, in a loop until stopped: `f` (a file) with a symlink to `outside/secret.txt`; `d` (a
/// directory holding `f`) with a symlink to `outside`; `h` (an empty directory) with a symlink
/// to `.git/hooks`.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<usize>>,
}

impl Swapper {
    fn start(root: &Path, outside: &Path) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (root, outside) = (root.to_path_buf(), outside.to_path_buf());
        let thread = std::thread::spawn(move || {
            let at = |name: &str| root.join(name);
            let mut swaps = 0;
            while !flag.load(Ordering::Relaxed) {
                // A file: the symlink renamed over it, then a fresh copy renamed back.
                let _ = symlink(outside.join("secret.txt"), at("f.link"));
                let _ = fs::rename(at("f.link"), at("f"));
                let _ = fs::write(at("f.new"), "inside\n");
                let _ = fs::rename(at("f.new"), at("f"));
                // Directories: moved aside, a symlink in their place, then back.
                for (dir, target) in [("d", outside.clone()), ("h", root.join(".git/hooks"))] {
                    let (aside, link) = (at(&format!("{dir}.real")), at(&format!("{dir}.link")));
                    let _ = fs::rename(at(dir), &aside);
                    let _ = symlink(&target, &link);
                    let _ = fs::rename(&link, at(dir));
                    let _ = fs::remove_file(at(dir));
                    let _ = fs::rename(&aside, at(dir));
                }
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

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Every file under `dir`, for showing that nothing appeared there.
fn names(dir: &Path) -> Vec<PathBuf> {
    tree(dir).into_iter().map(|(path, _)| path).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapping_process_never_gets_a_byte_outside_or_into_git_hooks() {
    let fx = Fixture::new();
    fx.file("f", "inside\n");
    fx.file("d/f", "inside\n");
    fs::create_dir_all(fx.root.join("h")).unwrap();
    fs::create_dir_all(fx.root.join(".git/hooks")).unwrap();
    fs::write(fx.outside.join("secret.txt"), "outside-bytes\n").unwrap();
    fs::write(fx.outside.join("f"), "outside-bytes in d\n").unwrap();
    let outside_before = tree(&fx.outside);

    let swapper = Swapper::start(&fx.root, &fx.outside);
    let (mut worked, mut refused) = (0usize, 0usize);
    for round in 0..ROUNDS {
        let calls = [
            ("read", json!({"path": "f"})),
            ("read", json!({"path": "d/f"})),
            (
                "write",
                json!({"path": "h/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
            ),
            (
                "write",
                json!({"path": format!("d/new/{}.txt", round % 8), "content": "pwned\n"}),
            ),
            ("write", json!({"path": "d/f", "content": "inside\n"})),
            (
                "edit",
                json!({"path": "f", "old_text": "inside", "new_text": "inside!"}),
            ),
            (
                "edit",
                json!({"path": "d/f", "old_text": "inside\n", "new_text": "inside\n\n"}),
            ),
            ("grep", json!({"pattern": "outside.bytes", "path": "d"})),
            ("grep", json!({"pattern": "outside.bytes"})),
            ("ls", json!({"path": "d", "depth": 2})),
        ];
        for (tool, args) in calls {
            let out = fx.call(tool, args.clone()).await.output;
            // An error may name the outside path it refused; no output shows its bytes, and
            // no listing its files.
            assert!(
                !out.content.contains("outside-bytes")
                    && (out.is_error || !out.content.contains("secret.txt")),
                "{tool} {args} saw the outside: {}",
                out.content
            );
            if out.is_error {
                refused += 1;
            } else {
                worked += 1;
            }
        }
    }
    let swaps = swapper.finish();

    assert_eq!(
        tree(&fx.outside),
        outside_before,
        "something was written outside the workspace"
    );
    assert_eq!(
        names(&fx.root.join(".git")),
        Vec::<PathBuf>::new(),
        "something was written into .git"
    );
    assert!(
        swaps > 100 && refused > 0 && worked > ROUNDS,
        "the race ran and honest calls still worked: {swaps} swaps, {worked} calls worked, \
         {refused} refused"
    );
}
