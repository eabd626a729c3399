//! tether's snapshot repository on every kind of workspace, and against a hostile one: nothing
//! the work tree's configuration or attributes name runs (while plain git, in the same tree,
//! runs it: the tests can fail), a program git is told to run cannot write the tree, and the
//! snapshot is bounded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use tokio_util::sync::CancellationToken;

use crate::{Confinement, Skip, Snapshot, Snapshots};

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

fn names(dir: &Path) -> Vec<String> {
    let mut all: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    all.sort();
    all
}

fn open(root: &Path, confinement: Confinement) -> Snapshots {
    Snapshots::open(&root.join(".tether"), root, confinement, &[]).unwrap()
}

async fn snap(snaps: &Snapshots) -> Snapshot {
    snaps.snapshot(&CancellationToken::new()).await.unwrap()
}

/// `git diff --stat` between two trees, in the snapshot repository.
async fn stat(snaps: &Snapshots, from: &Snapshot, to: &Snapshot) -> String {
    let cmd = snaps.command(&["diff", "--stat", from.tree.as_str(), to.tree.as_str()]);
    snaps
        .ok(&cmd, &CancellationToken::new())
        .await
        .unwrap()
        .stdout
}

#[tokio::test]
async fn every_kind_of_workspace_is_snapshotted_and_diffed_since_its_start() {
    for (kind, setup) in [
        ("no repository", ""),
        ("no commit", "git init -q"),
        (
            "a dirty repository",
            "git init -q && git add -A && git -c user.name=t -c user.email=t@x commit -qm one \
             && echo dirty >> a.txt",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("build.log"), "noise\n").unwrap();
        sh(root, setup);
        std::fs::create_dir_all(root.join(".tether")).unwrap();
        std::fs::write(root.join(".tether/tether.db"), "state").unwrap();
        let snaps = open(root, Confinement::Sandboxed);
        let start = snap(&snaps).await;
        let mut files = start.files.clone();
        files.sort();
        assert_eq!(files, [".gitignore", "a.txt"], "{kind}");
        std::fs::write(root.join("a.txt"), "changed\n").unwrap();
        std::fs::write(root.join("new.txt"), "new\n").unwrap();
        let now = snap(&snaps).await;
        let text = stat(&snaps, &start, &now).await;
        assert!(
            text.contains("a.txt") && text.contains("new.txt") && !text.contains(".tether"),
            "{kind}: {text}"
        );
        assert!(text.contains("2 files changed"), "{kind}: {text}");
        // The person's own repository is left as it was: no index, no object of tether's.
        if root.join(".git").is_dir() {
            let status = Command::new("git")
                .args(["status", "--porcelain"])
                .current_dir(root)
                .output()
                .unwrap();
            let status = String::from_utf8_lossy(&status.stdout);
            assert!(!status.contains("A "), "{kind}: nothing staged: {status}");
        }
    }
}

#[tokio::test]
async fn a_repository_made_before_lends_its_objects_and_one_made_later_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    sh(
        root,
        "git init -q && git add -A && git -c user.name=t -c user.email=t@x commit -qm one",
    );
    let snaps = open(root, Confinement::Sandboxed);
    let alternates = snaps.git_dir().join("objects/info/alternates");
    let lent = std::fs::read_to_string(&alternates).unwrap();
    assert!(lent.trim().ends_with(".git/objects"), "{lent}");
    snap(&snaps).await;

    let later = tempfile::tempdir().unwrap();
    let root = later.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let snaps = open(root, Confinement::Sandboxed);
    sh(root, "git init -q");
    let snaps_again = open(root, Confinement::Sandboxed);
    assert!(!snaps.git_dir().join("objects/info/alternates").exists());
    assert!(
        !snaps_again
            .git_dir()
            .join("objects/info/alternates")
            .exists()
    );
}

/// A repository whose configuration and attributes name programs (the agent made it in an
/// earlier run), with markers going to `marks/`.
fn hostile(root: &Path, marks: &Path) {
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let m = marks.display();
    sh(
        root,
        &format!(
            "git init -q && git config filter.evil.clean 'touch {m}/clean; cat' \
             && git config filter.evil.smudge 'touch {m}/smudge; cat' \
             && git config filter.evil.process 'touch {m}/process' \
             && git config diff.evil.textconv 'touch {m}/textconv; cat' \
             && git config diff.evil.command 'touch {m}/diffcommand' \
             && git config diff.external 'touch {m}/external' \
             && git config core.fsmonitor 'touch {m}/fsmonitor; false' \
             && git config core.hooksPath /nonexistent \
             && printf '* filter=evil diff=evil\\n' > .gitattributes"
        ),
    );
}

#[tokio::test]
async fn nothing_the_work_trees_configuration_or_attributes_name_runs() {
    for confinement in [Confinement::Sandboxed, Confinement::Unconfined] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let marks = dir.path().join("marks");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&marks).unwrap();
        hostile(&root, &marks);
        let snaps = open(&root, confinement);
        let start = snap(&snaps).await;
        std::fs::write(root.join("a.txt"), "two\n").unwrap();
        let now = snap(&snaps).await;
        let diff = snaps.command(&[
            "diff",
            "-U0",
            "--no-ext-diff",
            start.tree.as_str(),
            now.tree.as_str(),
        ]);
        let out = snaps.ok(&diff, &CancellationToken::new()).await.unwrap();
        assert!(out.stdout.contains("+two"), "{out:?}");
        assert_eq!(names(&marks), Vec::<String>::new(), "{confinement:?}");
        // Plain git in the same tree runs them: the test can fail.
        sh(&root, "git add -A; git diff --cached >/dev/null; true");
        assert!(!names(&marks).is_empty(), "plain git ran nothing");
    }
}

#[tokio::test]
async fn a_program_git_is_told_to_run_cannot_write_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    // In the work tree, where a sandboxed git can read and run it.
    let program = root.join("program.sh");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\ntouch \"$TMPDIR/ran\"\ntouch {ws}/written\ntouch {out}/written\nexit 0\n",
            ws = root.display(),
            out = outside.display()
        ),
    )
    .unwrap();
    sh(&root, "chmod +x program.sh");
    for confinement in [Confinement::Sandboxed, Confinement::Unconfined] {
        let snaps = open(&root, confinement);
        let start = snap(&snaps).await;
        std::fs::write(root.join("a.txt"), "two\n").unwrap();
        let now = snap(&snaps).await;
        // As though git had been told: an external diff program, from the environment.
        let diff = snaps
            .command(&["diff", start.tree.as_str(), now.tree.as_str()])
            .env("GIT_EXTERNAL_DIFF", program.display().to_string());
        snaps.run(&diff, &CancellationToken::new()).await.unwrap();
        let ran = snaps.git_dir().join("tmp/ran").exists();
        let written = root.join("written").exists() || outside.join("written").exists();
        match confinement {
            Confinement::Sandboxed => {
                assert!(ran, "the program ran");
                assert!(!written, "but wrote nothing outside tether's directory");
            }
            // Without the sandbox it writes: the sandbox is what stops it.
            Confinement::Unconfined => assert!(written),
        }
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
    }
}

#[tokio::test]
async fn a_huge_sparse_file_a_fifo_and_a_nested_repository_are_left_out_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let big = std::fs::File::create(root.join("big.bin")).unwrap();
    big.set_len(8 << 30).unwrap();
    sh(
        root,
        "mkfifo pipe && mkdir nested && cd nested && git init -q",
    );
    std::fs::write(root.join("nested/inner.txt"), "x\n").unwrap();
    let snaps = open(root, Confinement::Sandboxed);
    let taken = snap(&snaps).await;
    assert_eq!(taken.files, ["a.txt"]);
    let why = |path: &str| {
        taken
            .skipped
            .iter()
            .find(|s| s.path.trim_end_matches('/') == path)
            .map(|s| s.why)
    };
    assert_eq!(why("big.bin"), Some(Skip::TooLarge(8 << 30)));
    // git lists no FIFO; were one listed, it would be left out.
    assert!(matches!(why("pipe"), None | Some(Skip::NotAFile("a FIFO"))));
    assert!(
        matches!(why("nested"), Some(Skip::NotAFile(_))),
        "{:?}",
        taken.skipped
    );
}

#[tokio::test]
async fn the_state_directory_is_left_out_even_when_a_gitignore_lets_it_in() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.join(".gitignore"), "!.tether/\n!.tether/**\n").unwrap();
    std::fs::create_dir_all(root.join(".tether/runs")).unwrap();
    std::fs::write(root.join(".tether/runs/log"), "x\n").unwrap();
    let snaps = open(root, Confinement::Sandboxed);
    let taken = snap(&snaps).await;
    let mut files = taken.files;
    files.sort();
    assert_eq!(files, [".gitignore", "a.txt"]);
}

/// Someone who could write tether's repository (an agent, with the sandbox off) defines a filter
/// in its configuration and names it in its attributes: the next snapshot reads neither.
#[tokio::test]
async fn tethers_own_configuration_is_written_again_before_git_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&marks).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let snaps = open(&root, Confinement::Unconfined);
    let git_dir = snaps.git_dir().to_path_buf();
    let mut config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    config.push_str(&format!(
        "[filter \"evil\"]\n\tclean = touch {}/clean; cat\n",
        marks.display()
    ));
    std::fs::write(git_dir.join("config"), config).unwrap();
    std::fs::write(git_dir.join("info/attributes"), "* filter=evil\n").unwrap();
    let snaps = open(&root, Confinement::Unconfined);
    snap(&snaps).await;
    assert_eq!(names(&marks), Vec::<String>::new());
}
