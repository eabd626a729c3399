//! tether's snapshot repository kept whole and tidy: a pinned start survives the person's
//! `git gc` pruning what it borrowed (while an unpinned one does not: the tests can fail),
//! tidying drops the pins it is told to and what only they reached, and keeps every other
//! start readable without the person's repository.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::{Confinement, ObjectId, Snapshot, Snapshots};

fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
}

/// A repository at `root` with `a.txt` committed (the lender of the snapshot repository made
/// after it), and that repository.
fn workspace(root: &Path) -> Snapshots {
    std::fs::write(root.join("a.txt"), "committed once\n").unwrap();
    sh(
        root,
        "git init -q && printf '.tether/\\n' > .gitignore && git add -A \
         && git -c user.name=t -c user.email=t@x commit -qm one",
    );
    let snaps = Snapshots::open(&root.join(".tether"), root, Confinement::Sandboxed, &[]).unwrap();
    assert!(root.join(".tether/git/objects/info/alternates").is_file());
    snaps
}

/// The person rewrites the commit and prunes at once: the blob the snapshot borrowed is gone.
fn gc_prunes_the_first_commit(root: &Path) {
    sh(
        root,
        "echo 'committed again' > a.txt && git add -A \
         && git -c user.name=t -c user.email=t@x commit -q --amend -m two \
         && git reflog expire --expire=now --all && git gc -q --prune=now",
    );
}

async fn snap(snaps: &Snapshots) -> Snapshot {
    snaps.snapshot(&CancellationToken::new()).await.unwrap()
}

/// Whether every object of `tree` can be read in the snapshot repository.
async fn readable(snaps: &Snapshots, tree: &ObjectId) -> bool {
    let cmd = snaps.command(&["ls-tree", "-r", tree.as_str()]);
    let Ok(out) = snaps.ok(&cmd, &CancellationToken::new()).await else {
        return false;
    };
    for line in out.stdout.lines() {
        let id = line.split_whitespace().nth(2).unwrap();
        let cat = snaps.command(&["cat-file", "blob", id]);
        if snaps.ok(&cat, &CancellationToken::new()).await.is_err() {
            return false;
        }
    }
    true
}

/// `git diff --stat` of two trees.
async fn stat(snaps: &Snapshots, from: &ObjectId, to: &ObjectId) -> Result<String, String> {
    let cmd = snaps.command(&["diff", "--stat", from.as_str(), to.as_str()]);
    snaps
        .ok(&cmd, &CancellationToken::new())
        .await
        .map(|o| o.stdout)
        .map_err(|e| e.to_string())
}

/// Every file under `dir` made to look `age` old.
fn age(dir: &Path, age: Duration) {
    let then = SystemTime::now() - age;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            self::age(&path, age);
        } else {
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .or_else(|_| std::fs::File::open(&path));
            if let Ok(file) = file {
                let _ = file.set_modified(then);
            }
        }
    }
}

#[tokio::test]
async fn a_pinned_start_survives_the_persons_gc_and_an_unpinned_one_does_not() {
    for pinned in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let snaps = workspace(root);
        let start = snap(&snaps).await;
        if pinned {
            snaps
                .pin("r-1", &start.tree, &CancellationToken::new())
                .await
                .unwrap();
        }
        gc_prunes_the_first_commit(root);
        let now = snap(&snaps).await;
        let got = stat(&snaps, &start.tree, &now.tree).await;
        let whole = snaps.is_whole(&start.tree, &CancellationToken::new()).await;
        assert_eq!(whole.unwrap(), pinned);
        if pinned {
            let stat = got.unwrap();
            assert!(stat.contains("a.txt | 2 +-"), "{stat}");
            assert_eq!(
                snaps.pins(&CancellationToken::new()).await.unwrap(),
                ["r-1"]
            );
        } else {
            assert!(got.is_err(), "the borrowed blob was pruned: {got:?}");
        }
    }
}

/// A start pinned again (a resumed run) is left as it is; a second start's copy holds what it
/// adds, and both stay readable without the person's objects.
#[tokio::test]
async fn each_start_is_copied_once_and_stays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let snaps = workspace(root);
    let cancel = CancellationToken::new();
    let first = snap(&snaps).await;
    snaps.pin("r-1", &first.tree, &cancel).await.unwrap();
    let packs = || {
        std::fs::read_dir(root.join(".tether/git/objects/pack"))
            .unwrap()
            .count()
    };
    let after_first = packs();
    snaps.pin("r-1", &first.tree, &cancel).await.unwrap();
    assert_eq!(packs(), after_first, "pinned again: nothing copied");
    std::fs::write(root.join("b.txt"), "new in the second run\n").unwrap();
    let second = snap(&snaps).await;
    snaps.pin("r-2", &second.tree, &cancel).await.unwrap();
    gc_prunes_the_first_commit(root);
    assert!(readable(&snaps, &first.tree).await);
    assert!(readable(&snaps, &second.tree).await);
}

/// Tidying drops the pins it is told to and, once they are a day old, the objects only they
/// reached; every other start — one pinned without its copy too — is packed whole and stays
/// readable when the person's repository loses what it lent.
#[tokio::test]
async fn tidying_drops_what_it_is_told_to_and_keeps_the_rest_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let snaps = workspace(root);
    let cancel = CancellationToken::new();
    std::fs::write(root.join("old.txt"), "only the old run saw this\n").unwrap();
    let old = snap(&snaps).await;
    snaps.pin("r-old", &old.tree, &cancel).await.unwrap();
    std::fs::remove_file(root.join("old.txt")).unwrap();
    let kept = snap(&snaps).await;
    // Pinned by the ref alone, as when its copy failed: it still borrows.
    let name = format!("{}r-kept", crate::RUNS_REFS);
    let cmd = snaps.command(&["update-ref", &name, kept.tree.as_str()]);
    snaps.ok(&cmd, &cancel).await.unwrap();
    age(
        &root.join(".tether/git/objects"),
        Duration::from_secs(3 * 24 * 3600),
    );
    let tidied = snaps
        .tidy(&["r-old".to_owned()], &cancel)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        tidied,
        crate::Tidied {
            dropped: 1,
            kept: 1
        }
    );
    assert_eq!(snaps.pins(&cancel).await.unwrap(), ["r-kept"]);
    let old_blob = format!("{}:old.txt", old.tree);
    let exists = snaps.command(&["cat-file", "-e", &old_blob]);
    assert!(
        !snaps.run(&exists, &cancel).await.unwrap().ok(),
        "what only the dropped start reached is gone"
    );
    gc_prunes_the_first_commit(root);
    assert!(readable(&snaps, &kept.tree).await);
    assert!(!snaps.tidy_due(&cancel).await, "just tidied");
}

/// A repository is due to be tidied a week after it was last; one process tidies at a time.
#[tokio::test]
async fn tidying_is_due_weekly_and_one_process_tidies_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let snaps = workspace(root);
    let cancel = CancellationToken::new();
    assert!(!snaps.tidy_due(&cancel).await, "a new repository");
    let marker = std::fs::File::options()
        .write(true)
        .open(root.join(".tether/git/tidied"))
        .unwrap();
    marker
        .set_modified(SystemTime::now() - Duration::from_secs(8 * 24 * 3600))
        .unwrap();
    assert!(snaps.tidy_due(&cancel).await, "a week later");
    let held = std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(root.join(".tether/git/tidy.lock"))
        .unwrap();
    held.lock().unwrap();
    assert_eq!(snaps.tidy(&[], &cancel).await.unwrap(), None);
    held.unlock().unwrap();
    assert!(snaps.tidy(&[], &cancel).await.unwrap().is_some());
}
