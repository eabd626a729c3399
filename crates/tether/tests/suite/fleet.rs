//! `tether run --parallel N`: many goals of the plan at once, each in a worktree of its own on a
//! branch cut from the run's `tether/<run-id>`, merged back as each signs off, a goal starting
//! only once the goals in its `after:` are merged; the checkout is never written.

use std::path::Path;
use std::process::Stdio;

use tether_config::Api;
use tether_testkit::model_server::FakeModelServer;

use crate::common::fleet::{FileOf, agent, judge, own, shared};
use crate::common::{cmd, model_table, runtime, sh, text, wait_output};

/// A diamond (`base` → `left`, `right` → `top`) and a goal of its own (`alone`). Each goal's
/// work is a file `<id>.txt`; `top`'s verify also needs `left.txt` and `right.txt`, which its
/// branch holds only if it was cut after both were merged.
const DIAMOND: &str = "# Plan: shapes

## Goal: Base
<!-- id: base -->
status: active
done_when: the file TARGET-base exists as base.txt
verify: test -f base.txt

## Goal: Left
<!-- id: left -->
status: active
after: base
done_when: the file TARGET-left exists as left.txt
verify: test -f base.txt && test -f left.txt

## Goal: Right
<!-- id: right -->
status: active
after: base
done_when: the file TARGET-right exists as right.txt
verify: test -f base.txt && test -f right.txt

## Goal: Top
<!-- id: top -->
status: active
after: left, right
done_when: the file TARGET-top exists as top.txt
verify: test -f left.txt && test -f right.txt && test -f top.txt

## Goal: Alone
<!-- id: alone -->
status: active
done_when: the file TARGET-alone exists as alone.txt
verify: test -f alone.txt

## Log
";

fn repository(dir: &Path) {
    sh(
        dir,
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && printf '.tether/\\n' > .gitignore && printf 'mode=fast\\n' > config.txt \
         && git add -A && git commit -q -m start",
    );
}

/// A repository with `plan` committed, whose goals the fake agent and judge work (each goal on
/// its own file, or with `shared` all on one); `tether run --parallel 2` there, to its end.
struct Fleet {
    dir: tempfile::TempDir,
    out: std::process::Output,
    _servers: (FakeModelServer, FakeModelServer, tokio::runtime::Runtime),
}

fn run_fleet(plan: &str, file_of: FileOf) -> Fleet {
    let rt = runtime();
    let agent = rt.block_on(FakeModelServer::start(agent(file_of))).unwrap();
    let judge = rt.block_on(FakeModelServer::start(judge(file_of))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("tether.toml"),
        format!(
            "{}\n{}",
            model_table("model", Api::OpenAiChat, &agent, "worker-model"),
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    std::fs::write(root.join("plan.md"), plan).unwrap();
    repository(root);
    let state = tempfile::tempdir().unwrap();
    let child = cmd(root, &["run", "--parallel", "2", "--approve"])
        .env("XDG_STATE_HOME", state.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child);
    Fleet {
        dir,
        out,
        _servers: (agent, judge, rt),
    }
}

#[test]
fn a_diamond_of_goals_runs_two_at_once_and_merges_into_the_runs_branch() {
    let fleet = run_fleet(DIAMOND, own);
    let (root, out) = (fleet.dir.path(), &fleet.out);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("all goals merged into tether/r-"),
        "{stdout}"
    );
    let branch = stdout["all goals merged into ".len()..]
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    // Every goal's work is on the run's branch, each merged as one merge commit.
    for goal in ["base", "left", "right", "top", "alone"] {
        assert_eq!(
            sh(root, &format!("git show {branch}:{goal}.txt")),
            format!("done {goal}\n")
        );
        assert_eq!(sh(root, &format!("git show {branch}:{goal}.env")), goal);
        assert!(
            stderr.contains(&format!("merged goal {goal} into {branch}")),
            "{stderr}"
        );
    }
    let merges = sh(
        root,
        &format!("git rev-list --merges --count main..{branch}"),
    );
    assert_eq!(merges.trim(), "5");
    // A merged goal's worktree is gone, its branch kept; the run's own worktree stays.
    let trees = sh(root, "git worktree list --porcelain");
    assert_eq!(trees.matches("worktree ").count(), 2, "{trees}");
    for goal in ["base", "left", "right", "top", "alone"] {
        sh(root, &format!("git rev-parse --verify -q {branch}-{goal}"));
    }
    // The checkout and its branch are as they were.
    assert_eq!(sh(root, "git status --porcelain"), "");
    assert_eq!(sh(root, "git rev-list --count main").trim(), "1");
    assert!(!root.join("base.txt").exists());
}

/// Two goals that change the same lines, and one waiting on the second.
const CLASH: &str = "# Plan: clash

## Goal: First
<!-- id: first -->
status: active
done_when: shared.txt says TARGET-first
verify: grep -q first shared.txt

## Goal: Second
<!-- id: second -->
status: active
done_when: shared.txt says TARGET-second
verify: grep -q second shared.txt

## Goal: Later
<!-- id: later -->
status: active
after: second
done_when: shared.txt says TARGET-later
verify: grep -q later shared.txt

## Log
";

#[test]
fn a_conflicting_merge_is_undone_and_left_to_a_person_and_what_waits_on_it_never_starts() {
    let fleet = run_fleet(CLASH, shared);
    let (root, out) = (fleet.dir.path(), &fleet.out);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    // Whichever signed off first is merged; the other conflicts in shared.txt.
    let merged = if stdout.contains("merged: first") {
        "first"
    } else {
        "second"
    };
    let other = if merged == "first" { "second" } else { "first" };
    // (the plan too: each branch signed its own goal off in it)
    assert!(
        stdout.contains(&format!(
            "{other} conflicts in plan.md, shared.txt (merge tether/r-"
        )),
        "{stdout}"
    );
    let branch = stderr
        .lines()
        .find_map(|l| l.strip_prefix("branch "))
        .and_then(|l| l.split(':').next())
        .unwrap()
        .to_owned();
    // The run's branch holds the merged goal's work alone, and no merge in progress.
    assert_eq!(
        sh(root, &format!("git show {branch}:shared.txt")),
        format!("done {merged}\n")
    );
    if merged == "first" {
        // `later` waits on `second`, which was not merged: it never started.
        assert!(stdout.contains("waiting on them: later"), "{stdout}");
        assert!(!stderr.contains("committed goal later"), "{stderr}");
    }
    assert_eq!(sh(root, "git status --porcelain"), "");
}

/// `change` rewrites the configuration `keep`'s verify reads; `later` waits on `change`.
const REGRESS: &str = "# Plan: regress

## Goal: Keep
<!-- id: keep -->
status: active
done_when: TARGET-keep is written and the mode stays fast
verify: test -f keep.txt && grep -q mode=fast config.txt

## Goal: Change
<!-- id: change -->
status: active
after: keep
done_when: config.txt says TARGET-change
verify: grep -q change config.txt

## Goal: Later
<!-- id: later -->
status: active
after: change
done_when: TARGET-later is written
verify: test -f later.txt

## Log
";

/// `change` writes `config.txt`; the others their own file.
fn regressing(goal: &str) -> String {
    if goal == "change" {
        "config.txt".to_owned()
    } else {
        own(goal)
    }
}

#[test]
fn a_merge_that_breaks_a_goal_merged_before_stops_the_run_naming_both() {
    let fleet = run_fleet(REGRESS, regressing);
    let (root, out) = (fleet.dir.path(), &fleet.out);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("after merging change, the verify of keep fails on tether/r-"),
        "{stdout}"
    );
    assert!(stdout.contains("merged: keep, change"), "{stdout}");
    assert!(stderr.contains("verify of keep: "), "{stderr}");
    // Nothing after it started.
    assert!(!stderr.contains("committed goal later"), "{stderr}");
    assert_eq!(sh(root, "git status --porcelain"), "");
}

#[test]
fn without_a_repository_or_a_commit_it_is_refused_before_any_contract_is_approved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("plan.md"), DIAMOND).unwrap();
    for setup in ["true", "git init -q"] {
        sh(root, setup);
        let out = cmd(root, &["run", "--parallel", "2", "--approve"])
            .output()
            .unwrap();
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains("--parallel works on each goal in a git worktree of the repository")
                && said.contains("or run without --parallel"),
            "{said}"
        );
        assert!(!said.contains("Locked"), "{said}");
    }
}
