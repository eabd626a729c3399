#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use tether_config::Workspace;
use tether_git::{Confinement, Start, StartTree};
use tokio_util::sync::CancellationToken;

use super::{Baseline, WorkTree, collect};
use crate::changed::Unknown;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The workspace at `root` as it is now, as a run's start.
async fn start_of(ws: &Workspace) -> Baseline {
    let snaps =
        tether_git::Snapshots::open(&ws.state_dir(), ws.root(), Confinement::Sandboxed, &[])
            .unwrap();
    let snapshot = snaps.snapshot(&CancellationToken::new()).await.unwrap();
    Baseline {
        start: Start::Taken(StartTree::of(&snapshot)),
        run: None,
    }
}

async fn since(ws: &Workspace, baseline: &Baseline) -> WorkTree {
    collect(
        ws,
        baseline,
        (Confinement::Sandboxed, &[]),
        &CancellationToken::new(),
    )
    .await
}

/// `setup` (shell) in a fresh directory with `calc.sh` and `.nvmrc`: one kind of workspace.
async fn workspace(setup: &str) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("calc.sh"), "#!/bin/sh\necho $(($1 - $2))\nfi\n").unwrap();
    std::fs::write(root.join(".nvmrc"), "18\n").unwrap();
    let out = Command::new("sh")
        .args(["-c", setup])
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let ws = Workspace::at(root);
    (dir, ws)
}

#[tokio::test]
async fn the_changed_lines_are_those_since_the_run_began_in_every_kind_of_workspace() {
    let commit = "git add -A && git -c user.name=t -c user.email=t@x commit -qm one";
    for (kind, setup) in [
        (
            "a repository with commits",
            format!("git init -q && {commit}"),
        ),
        ("a repository with no commit", "git init -q".to_owned()),
        ("a directory that is no repository", String::new()),
        (
            // The person changed `fi` before the run: not the run's work.
            "a dirty tree",
            format!("git init -q && {commit} && sed -i 's/^fi$/fi # done/' calc.sh"),
        ),
    ] {
        let (_dir, ws) = workspace(&setup).await;
        let root = ws.root();
        let baseline = start_of(&ws).await;
        let text = std::fs::read_to_string(root.join("calc.sh")).unwrap();
        std::fs::write(root.join("calc.sh"), text.replace("$1 - $2", "$1 + $2")).unwrap();
        std::fs::write(root.join("NEW.md"), "a\nb\n").unwrap();
        std::fs::create_dir_all(root.join(".tether")).unwrap();
        std::fs::write(root.join(".tether/tether.db"), "x").unwrap();
        let work = since(&ws, &baseline).await;
        let changed = &work.changed;
        assert_eq!(changed.unknown_reason(), None, "{kind}: {}", work.summary);
        assert!(changed.contains(Path::new("calc.sh"), 2), "{kind}");
        assert!(!changed.contains(Path::new("calc.sh"), 1), "{kind}");
        assert!(
            !changed.contains(Path::new("calc.sh"), 3),
            "{kind}: the person's line"
        );
        assert!(changed.contains(Path::new("NEW.md"), 2), "{kind}");
        assert!(!changed.contains(Path::new(".nvmrc"), 1), "{kind}");
        assert!(
            !changed.contains(Path::new(".tether/tether.db"), 1),
            "{kind}"
        );
        assert!(
            work.summary.starts_with(
                "changes since the run began (git diff --stat):\n NEW.md  | 2 ++\n calc.sh | 2 +-\n"
            ),
            "{kind}: {}",
            work.summary
        );
        let mut tracked = work.tracked.unwrap();
        tracked.sort();
        assert_eq!(
            tracked,
            [
                Path::new(".nvmrc"),
                Path::new("NEW.md"),
                Path::new("calc.sh")
            ],
            "{kind}"
        );
    }
}

#[tokio::test]
async fn the_changed_lines_are_relative_to_a_workspace_inside_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    let root = top.join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    git(top, &["init", "-q"]);
    std::fs::write(top.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join("src/calc.sh"), "#!/bin/sh\necho $(($1 - $2))\n").unwrap();
    std::fs::write(top.join("outside.txt"), "one\n").unwrap();
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "first"]);
    let ws = Workspace::at(&root);
    let baseline = start_of(&ws).await;
    std::fs::write(root.join("src/calc.sh"), "#!/bin/sh\necho $(($1 + $2))\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/out.txt"), "built\n").unwrap();
    std::fs::write(top.join("outside.txt"), "two\n").unwrap();
    let work = since(&ws, &baseline).await;
    assert!(work.changed.contains(Path::new("src/calc.sh"), 2));
    assert_eq!(
        work.changed.files().count(),
        1,
        "outside the workspace and ignored above it: no change: {:?}",
        work.changed
    );
}

#[tokio::test]
async fn without_a_start_no_line_is_known_and_the_judge_is_told_why() {
    let (_dir, ws) = workspace("").await;
    for (start, reason) in [
        (Start::Unrecorded, "an older tether"),
        (Start::Failed("no sandbox".to_owned()), "no sandbox"),
    ] {
        let baseline = Baseline { start, run: None };
        let work = since(&ws, &baseline).await;
        assert_eq!(work.changed.unknown_reason(), Some(Unknown::NoStart));
        assert!(work.tracked.is_none());
        assert!(
            work.summary
                .starts_with("what changed since the run began is not known")
                && work.summary.contains(reason),
            "{}",
            work.summary
        );
    }
}

#[tokio::test]
async fn files_left_out_of_a_snapshot_are_named_and_none_of_their_lines_counts() {
    let (_dir, ws) = workspace("").await;
    let root = ws.root();
    let big = std::fs::File::create(root.join("big.bin")).unwrap();
    big.set_len(4 << 30).unwrap();
    let baseline = start_of(&ws).await;
    // Small now: a new file as far as git knows, but it was there, left out.
    std::fs::write(root.join("big.bin"), "small now\n").unwrap();
    // And one more, huge now.
    let huge = std::fs::File::create(root.join("huge.img")).unwrap();
    huge.set_len(1 << 30).unwrap();
    let work = since(&ws, &baseline).await;
    assert!(!work.changed.contains(Path::new("big.bin"), 1));
    // What the judge reads.
    insta::assert_snapshot!(work.summary);
}

/// A start taken without its pin (as by an older tether) borrowed a blob the person's `git gc`
/// has since pruned: the diff cannot be made, and the judge is told why — no line counts as
/// changed (stricter), and the files now are still known.
#[tokio::test]
async fn a_start_whose_borrowed_object_was_pruned_is_said_lost_and_no_line_counts() {
    let (_dir, ws) = workspace(
        "git init -q && printf '.tether/\\n' > .gitignore && git add -A \
         && git -c user.name=t -c user.email=t@x commit -qm one",
    )
    .await;
    let baseline = start_of(&ws).await;
    let root = ws.root();
    std::fs::write(root.join("calc.sh"), "#!/bin/sh\necho $(($1 + $2))\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "--amend", "-m", "two"]);
    git(root, &["reflog", "expire", "--expire=now", "--all"]);
    git(root, &["gc", "-q", "--prune=now"]);
    let work = since(&ws, &baseline).await;
    assert_eq!(work.changed.unknown_reason(), Some(Unknown::StartLost));
    assert!(work.summary.contains("no longer whole"), "{}", work.summary);
    assert!(work.tracked.is_some());
}
