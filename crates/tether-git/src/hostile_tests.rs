//! git run through [`crate::GitRepo`] in repositories whose configuration names programs: none
//! of them runs, while plain git, in the same repository, runs each (so the tests can fail).
//!
//! These show the first wall, the neutralised configuration, alone: the repositories run their
//! commands unconfined (as with the run's sandbox off), and the commands include some tether
//! never runs on a person's checkout (`add`, `commit`), which its sandbox would not let write.
//! The second wall, the sandbox, is `sandbox_tests.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use tokio_util::sync::CancellationToken;

use crate::{Found, GitCommand, GitRepo, discover};

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

/// A committed repository at `dir/repo` with a change, then `hostile` (shell, in the
/// repository) run; the markers go to `dir/marks/`.
fn repository(dir: &Path, hostile: &str) -> (PathBuf, PathBuf) {
    let repo = dir.join("repo");
    let marks = dir.join("marks");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&marks).unwrap();
    sh(
        &repo,
        "git init -q && git config user.name t && git config user.email t@x \
         && echo one > a.txt && git add -A && git commit -q -m one && echo two >> a.txt",
    );
    sh(
        &repo,
        &hostile.replace("MARKS", &marks.display().to_string()),
    );
    (repo, marks)
}

fn marks(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

async fn found(dir: &Path) -> GitRepo {
    let unconfined = crate::Confinement::Unconfined;
    match discover(dir, unconfined, &[], &CancellationToken::new())
        .await
        .unwrap()
    {
        Found::Repo(repo) => repo,
        Found::NotARepository(why) => panic!("{why}"),
    }
}

/// The commands tether runs on a tree: the judge's diff, the snapshot, a commit.
async fn tethers_commands(repo: &GitRepo, cwd: &Path) {
    let cancel = CancellationToken::new();
    let index = cwd.join("../throwaway.index");
    for (args, env) in [
        (&["diff", "--stat", "HEAD", "--"][..], None),
        (
            &[
                "diff",
                "-U0",
                "--no-ext-diff",
                "--no-textconv",
                "HEAD",
                "--",
            ],
            None,
        ),
        (&["ls-files", "--others", "--exclude-standard"], None),
        (&["status", "--porcelain"], None),
        (&["add", "-A", "--", "."], Some(&index)),
        (&["write-tree"], Some(&index)),
        (&["add", "--all"], None),
        (&["commit", "--quiet", "-m", "two"], None),
    ] {
        let mut cmd = GitCommand::new(cwd, args);
        if let Some(index) = env {
            cmd = cmd.env("GIT_INDEX_FILE", index.display().to_string());
        }
        let out = repo.run(&cmd, &cancel).await.unwrap();
        assert!(out.ok(), "{args:?}: {out:?}");
    }
}

/// Plain git runs what the configuration says (the test can fail).
fn plain_git_runs_it(repo: &Path, marks_dir: &Path) {
    sh(
        repo,
        "git diff HEAD >/dev/null; git status >/dev/null; git add -A; \
         git commit -q -m plain || true",
    );
    assert!(!marks(marks_dir).is_empty(), "plain git ran nothing");
}

#[tokio::test]
async fn no_program_the_repositorys_configuration_names_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, marks_dir) = repository(
        dir.path(),
        "git config core.fsmonitor 'touch MARKS/fsmonitor; false' \
         && mkdir -p hooks && printf '#!/bin/sh\\ntouch MARKS/hook\\n' > hooks/pre-commit \
         && chmod +x hooks/pre-commit && git config core.hooksPath \"$PWD/hooks\" \
         && git config filter.x.clean 'touch MARKS/clean; cat' \
         && git config filter.x.smudge 'touch MARKS/smudge; cat' \
         && git config diff.x.textconv 'touch MARKS/textconv; cat' \
         && git config diff.x.command 'touch MARKS/diffcommand' \
         && git config diff.external 'touch MARKS/external' \
         && git config core.pager 'touch MARKS/pager; cat' \
         && git config commit.gpgSign true && git config gpg.program 'touch MARKS/gpg' \
         && printf '* filter=x diff=x\\n' > .gitattributes",
    );
    let pinned = found(&repo).await;
    tethers_commands(&pinned, &repo).await;
    assert_eq!(marks(&marks_dir), Vec::<String>::new());
    plain_git_runs_it(&repo, &marks_dir);
}

#[tokio::test]
async fn a_submodule_pointed_at_the_agents_repository_is_never_entered() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, marks_dir) = repository(dir.path(), "true");
    let sub = dir.path().join("sub-origin");
    std::fs::create_dir_all(&sub).unwrap();
    sh(
        &sub,
        "git init -q && git config user.name t && git config user.email t@x \
         && echo s > s.txt && git add -A && git commit -q -m s",
    );
    sh(
        &repo,
        &format!(
            "git -c protocol.file.allow=always submodule add -q {} sub \
             && git commit -q -m sub",
            sub.display()
        ),
    );
    let pinned = found(&repo).await;
    // The agent's repository, where the submodule's `.git` file now points.
    let evil = dir.path().join("evil");
    std::fs::create_dir_all(&evil).unwrap();
    sh(
        &evil,
        &format!(
            "git init -q && git config user.name t && git config user.email t@x \
             && echo x > s.txt && git add -A && git commit -q -m evil \
             && git config core.fsmonitor 'touch {}/fsmonitor; false' && echo y > s.txt",
            marks_dir.display()
        ),
    );
    std::fs::write(
        repo.join("sub/.git"),
        format!("gitdir: {}\n", evil.join(".git").display()),
    )
    .unwrap();
    tethers_commands(&pinned, &repo).await;
    assert_eq!(marks(&marks_dir), Vec::<String>::new());
    sh(&repo, "git status >/dev/null");
    assert!(!marks(&marks_dir).is_empty(), "plain git entered it");
}

#[tokio::test]
async fn a_pinned_repository_ignores_a_replaced_dot_git() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, marks_dir) = repository(dir.path(), "true");
    let pinned = found(&repo).await;
    // The repository moves away; the agent puts one of its own in its place.
    let real = dir.path().join("real.git");
    std::fs::rename(repo.join(".git"), &real).unwrap();
    sh(
        &repo,
        "git init -q && git config core.fsmonitor 'touch MARKS/fsmonitor; false'"
            .replace("MARKS", &marks_dir.display().to_string())
            .as_str(),
    );
    let pinned = GitRepo {
        git_dir: real,
        ..pinned
    };
    tethers_commands(&pinned, &repo).await;
    assert_eq!(marks(&marks_dir), Vec::<String>::new());
    // The commit went to the pinned repository.
    let log = pinned
        .ok(
            &GitCommand::new(&repo, &["log", "--format=%s", "-1"]),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(log.trim(), "two");
}

/// A driver defined first, then more than a listing holds of harmless ones: the listing is
/// refused whole, and the command with it, rather than read in part (which left the first
/// driver armed).
#[tokio::test]
async fn a_driver_listing_too_long_to_read_whole_refuses_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, marks_dir) = repository(
        dir.path(),
        "git config filter.evil.clean 'touch MARKS/clean; cat' \
         && printf '* filter=evil\\n' > .gitattributes",
    );
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.join(".git/config"))
        .unwrap();
    // One harmless driver's key again and again, each listed as `filter.harmless.clean` and a
    // NUL: more than the listing holds in all, while the overrides stay few.
    let key = "\tclean = cat\n";
    let listed = "filter.harmless.clean\0".len();
    let filler = format!(
        "[filter \"harmless\"]\n{}",
        key.repeat(crate::drivers::LISTING_BYTES / listed + 100)
    );
    std::io::Write::write_all(&mut config, filler.as_bytes()).unwrap();
    drop(config);
    let pinned = found(&repo).await;
    let got = pinned
        .run(
            &GitCommand::new(&repo, &["add", "--all"]),
            &CancellationToken::new(),
        )
        .await;
    assert!(matches!(got, Err(crate::GitError::Cut { .. })), "{got:?}");
    assert_eq!(marks(&marks_dir), Vec::<String>::new());
    plain_git_runs_it(&repo, &marks_dir);
}

#[tokio::test]
async fn no_repository_is_found_where_there_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let got = discover(
        dir.path(),
        crate::Confinement::Sandboxed,
        &[],
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(matches!(got, Found::NotARepository(_)), "{got:?}");
}
