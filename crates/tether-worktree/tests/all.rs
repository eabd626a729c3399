#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Worktrees in real repositories made by `git init` in temporary directories.

use std::path::{Path, PathBuf};
use std::process::Command;

use tether_git::Confinement;
use tether_worktree::{
    Merge, OnConflict, Repo, Snapshotting, WorktreeError, branch_name, goal_branch_name,
};

struct Fixture {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    trees: PathBuf,
    state: PathBuf,
}

impl Fixture {
    /// How the commits are built: the checkout's state directory's snapshot repository.
    fn with(&self) -> Snapshotting<'_> {
        Snapshotting {
            state_dir: &self.state,
            git: Confinement::Sandboxed,
            env_remove: &[],
        }
    }
}

fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    sh(
        &repo,
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && echo one > a.txt && git add a.txt && git commit -q -m first",
    );
    Fixture {
        trees: tmp.path().join("trees"),
        state: repo.join(".tether"),
        repo,
        _tmp: tmp,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_run_gets_a_locked_branch_and_worktree_and_the_checkout_is_untouched() {
    let f = fixture();
    std::fs::write(f.repo.join("a.txt"), "uncommitted\n").unwrap();
    std::fs::write(f.repo.join("new.txt"), "untracked\n").unwrap();
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let tree = rt
        .block_on(repo.create("r-1", &f.trees.join("r-1")))
        .unwrap();
    assert_eq!(tree.branch, "tether/r-1");
    assert_eq!(
        std::fs::read_to_string(tree.dir.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!tree.dir.join("new.txt").exists());
    std::fs::write(tree.dir.join("a.txt"), "changed by the agent\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(f.repo.join("a.txt")).unwrap(),
        "uncommitted\n"
    );
    let list = rt.block_on(repo.list()).unwrap();
    let mine = list.iter().find(|w| w.run_id() == Some("r-1")).unwrap();
    assert_eq!(mine.locked.as_deref(), Some("tether run r-1"));
    // A second run beside it.
    let other = rt
        .block_on(repo.create("r-2", &f.trees.join("r-2")))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(other.dir.join("a.txt")).unwrap(),
        "one\n"
    );
}

#[test]
fn reopening_finds_the_worktree_or_makes_it_again_from_the_branch() {
    let f = fixture();
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let dir = f.trees.join("r-1");
    let tree = rt.block_on(repo.create("r-1", &dir)).unwrap();
    std::fs::write(dir.join("work.txt"), "kept\n").unwrap();
    let again = rt.block_on(repo.reopen("r-1", &dir)).unwrap();
    assert_eq!(again, tree);
    assert!(dir.join("work.txt").exists());
    rt.block_on(tree.commit("work\n", false, &f.with()))
        .unwrap()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let remade = rt.block_on(repo.reopen("r-1", &dir)).unwrap();
    assert_eq!(
        std::fs::read_to_string(remade.dir.join("work.txt")).unwrap(),
        "kept\n"
    );
    let err = rt
        .block_on(repo.reopen("r-9", &f.trees.join("r-9")))
        .unwrap_err();
    assert!(matches!(err, WorktreeError::NoBranch { .. }), "{err}");
}

#[test]
fn a_live_worktree_is_not_removed_and_a_removed_one_keeps_its_branch() {
    let f = fixture();
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let dir = f.trees.join("r-1");
    rt.block_on(repo.create("r-1", &dir)).unwrap();
    let err = rt.block_on(repo.remove("r-1", &dir, true)).unwrap_err();
    assert!(matches!(err, WorktreeError::Live { .. }));
    assert!(dir.is_dir());
    rt.block_on(repo.remove("r-1", &dir, false)).unwrap();
    assert!(!dir.exists());
    assert!(sh(&f.repo, "git branch --list").contains(&branch_name("r-1")));
}

#[test]
fn a_commit_has_the_users_identity_and_runs_no_hook_unless_asked() {
    let f = fixture();
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let tree = rt
        .block_on(repo.create("r-1", &f.trees.join("r-1")))
        .unwrap();
    assert_eq!(
        rt.block_on(tree.commit("nothing\n", false, &f.with()))
            .unwrap(),
        None
    );
    let hooks = f.repo.join(".git/hooks");
    // Marks the hooks leave where their sandbox lets them write: the worktree.
    for hook in ["pre-commit", "post-commit"] {
        let marker = tree.dir.join(format!("{hook}.ran"));
        std::fs::write(
            hooks.join(hook),
            format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
        )
        .unwrap();
        sh(&hooks, &format!("chmod +x {hook}"));
    }
    std::fs::write(tree.dir.join("b.txt"), "b\n").unwrap();
    let id = rt
        .block_on(tree.commit("Add b\n\nTether-Run: r-1\n", false, &f.with()))
        .unwrap()
        .unwrap();
    assert!(!tree.dir.join("pre-commit.ran").exists());
    assert!(!tree.dir.join("post-commit.ran").exists());
    let shown = sh(
        &tree.dir,
        &format!("git log -1 --format='%an <%ae>%n%B' {id}"),
    );
    assert_eq!(shown, "Ana <ana@example.com>\nAdd b\n\nTether-Run: r-1\n\n");
    // The branch moved, and the worktree shows clean against it.
    assert_eq!(sh(&tree.dir, "git status --porcelain"), "");
    assert_eq!(sh(&f.repo, "git rev-parse tether/r-1").trim(), id);
    std::fs::write(tree.dir.join("c.txt"), "c\n").unwrap();
    rt.block_on(tree.commit("Add c\n", true, &f.with()))
        .unwrap()
        .unwrap();
    assert!(tree.dir.join("pre-commit.ran").exists());
    assert!(tree.dir.join("post-commit.ran").exists());
}

#[test]
fn only_a_repository_with_a_commit_can_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = rt();
    let err = rt
        .block_on(Repo::discover(tmp.path(), Confinement::Sandboxed))
        .unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepo { .. }), "{err}");
    sh(tmp.path(), "git init -q");
    let err = rt
        .block_on(Repo::discover(tmp.path(), Confinement::Sandboxed))
        .unwrap_err();
    assert!(err.to_string().contains("no commit yet"), "{err}");
}

/// The repository defines a filter (an agent made it in an earlier run, or planted it) and the
/// agent's `.gitattributes` names it for every file: the commit runs none of it and holds the
/// files as they are, while plain git would run it (the test can fail).
#[test]
fn a_commit_runs_no_filter_the_repositorys_configuration_defines() {
    let f = fixture();
    let marks = f._tmp.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    sh(
        &f.repo,
        &format!(
            "git config filter.evil.clean 'touch {m}/clean; tr a-z A-Z' \
             && git config core.fsmonitor 'touch {m}/fsmonitor; false'",
            m = marks.display()
        ),
    );
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let tree = rt
        .block_on(repo.create("r-1", &f.trees.join("r-1")))
        .unwrap();
    std::fs::write(tree.dir.join(".gitattributes"), "* filter=evil\n").unwrap();
    std::fs::write(tree.dir.join("b.txt"), "lower\n").unwrap();
    let id = rt
        .block_on(tree.commit("Add b\n", false, &f.with()))
        .unwrap()
        .unwrap();
    assert_eq!(std::fs::read_dir(&marks).unwrap().count(), 0);
    assert_eq!(sh(&f.repo, &format!("git show {id}:b.txt")), "lower\n");
    sh(&tree.dir, "echo more >> b.txt && git add b.txt");
    assert!(marks.join("clean").exists(), "plain git runs it");
}

/// A worktree of a repository whose drivers cannot all be listed (one defined first, then more
/// than the listing holds) is not made: git would have run the first one.
#[test]
fn a_repository_whose_drivers_cannot_all_be_listed_gets_no_worktree() {
    let f = fixture();
    let marks = f._tmp.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    sh(
        &f.repo,
        &format!(
            "git config filter.evil.smudge 'touch {m}/smudge; cat' \
             && printf '* filter=evil\\n' > .gitattributes && git add .gitattributes \
             && git commit -qm attributes",
            m = marks.display()
        ),
    );
    let filler = format!(
        "[filter \"harmless\"]\n{}",
        "\tclean = cat\n".repeat(tether_git::drivers::LISTING_BYTES / 20 + 100)
    );
    let config = f.repo.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&filler);
    std::fs::write(&config, text).unwrap();
    let rt = rt();
    let err = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .and_then(|repo| rt.block_on(repo.create("r-1", &f.trees.join("r-1"))));
    assert!(
        matches!(
            err,
            Err(WorktreeError::Run(tether_git::GitError::Cut { .. }))
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_dir(&marks).unwrap().count(), 0);
}

/// A file too large for a snapshot that the branch already holds stays as it was in the
/// commit (it is left out, never dropped), and a file the run deleted is deleted.
#[test]
fn a_commit_keeps_a_large_file_it_did_not_take_and_drops_a_deleted_one() {
    let f = fixture();
    let big = std::fs::File::create(f.repo.join("asset.bin")).unwrap();
    big.set_len(17 << 20).unwrap();
    sh(&f.repo, "git add asset.bin && git commit -qm asset");
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let tree = rt
        .block_on(repo.create("r-1", &f.trees.join("r-1")))
        .unwrap();
    std::fs::remove_file(tree.dir.join("a.txt")).unwrap();
    std::fs::write(tree.dir.join("b.txt"), "b\n").unwrap();
    let id = rt
        .block_on(tree.commit("Add b\n", false, &f.with()))
        .unwrap()
        .unwrap();
    let files = sh(&f.repo, &format!("git ls-tree -r --name-only {id}"));
    assert_eq!(files, "asset.bin\nb.txt\n");
}

/// What a hook of the repository's tries in the hooks-mode commit, and what it reached.
struct HookReach {
    /// The files it wrote, by name.
    wrote: Vec<&'static str>,
    /// Whether it reached a port on this machine.
    connected: bool,
}

/// A hooks-mode commit whose `pre-commit` (the person's, running tooling on the agent's files)
/// tries to write the worktree, the checkout, the repository's configuration and hooks, and a
/// directory elsewhere, and to connect to a local port.
fn hostile_hook(git: Confinement) -> HookReach {
    let f = fixture();
    let rt = rt();
    let repo = rt.block_on(Repo::discover(&f.repo, git)).unwrap();
    let tree = rt
        .block_on(repo.create("r-1", &f.trees.join("r-1")))
        .unwrap();
    let elsewhere = f._tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let targets = [
        ("worktree", tree.dir.join("hook.ran")),
        ("checkout", f.repo.join("hook.ran")),
        ("config", f.repo.join(".git/config")),
        ("hooks", f.repo.join(".git/hooks/post-checkout")),
        ("elsewhere", elsewhere.join("hook.ran")),
    ];
    let mut hook = String::from("#!/bin/sh\n");
    for (_, path) in &targets {
        hook.push_str(&format!(
            "echo '# hook' >> '{}' 2>/dev/null\n",
            path.display()
        ));
    }
    hook.push_str(&format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null\nexit 0\n"
    ));
    let hooks = f.repo.join(".git/hooks");
    std::fs::write(hooks.join("pre-commit"), hook).unwrap();
    sh(&hooks, "chmod +x pre-commit");
    std::fs::write(tree.dir.join("b.txt"), "b\n").unwrap();
    let with = Snapshotting { git, ..f.with() };
    let id = rt
        .block_on(tree.commit("Add b\n", true, &with))
        .unwrap()
        .unwrap();
    assert_eq!(sh(&f.repo, "git rev-parse tether/r-1").trim(), id);
    let wrote = targets
        .iter()
        .filter(|(_, path)| std::fs::read_to_string(path).is_ok_and(|t| t.contains("# hook")))
        .map(|(name, _)| *name)
        .collect();
    HookReach {
        wrote,
        connected: listener.accept().is_ok(),
    }
}

/// The person asked for their hooks (`commit_hooks = true`): they run, in a sandbox — the
/// worktree written, nothing of the checkout, its configuration or hooks, nothing elsewhere,
/// no network. With the run's sandbox off, the same hook reaches all of it (the test can fail).
#[test]
fn the_persons_hooks_run_in_a_sandbox_that_writes_only_the_worktree() {
    let confined = hostile_hook(Confinement::Sandboxed);
    assert_eq!(confined.wrote, ["worktree"]);
    assert!(!confined.connected, "the hook reached the network");
    let unconfined = hostile_hook(Confinement::Unconfined);
    assert_eq!(
        unconfined.wrote,
        ["worktree", "checkout", "config", "hooks", "elsewhere"]
    );
    assert!(unconfined.connected);
}

/// A run of two goals: the run's worktree, and each goal's cut from its branch, its work
/// committed there.
struct TwoGoals {
    f: Fixture,
    rt: tokio::runtime::Runtime,
    run: tether_worktree::Worktree,
    goals: [tether_worktree::Worktree; 2],
}

fn two_goals(work: [(&str, &str); 2]) -> TwoGoals {
    let f = fixture();
    let rt = rt();
    let repo = rt
        .block_on(Repo::discover(&f.repo, Confinement::Sandboxed))
        .unwrap();
    let run = rt
        .block_on(repo.create("r-1", &f.trees.join("r-1")))
        .unwrap();
    let goals = ["a", "b"].map(|goal| {
        let dir = f.trees.join(format!("r-1-{goal}"));
        let tree = rt
            .block_on(repo.create_goal("r-1", goal, &run.branch, &dir))
            .unwrap();
        assert_eq!(tree.branch, goal_branch_name("r-1", goal));
        tree
    });
    for (tree, (file, text)) in goals.iter().zip(work) {
        std::fs::write(tree.dir.join(file), text).unwrap();
        rt.block_on(tree.commit("goal work\n", false, &f.with()))
            .unwrap()
            .unwrap();
    }
    TwoGoals { f, rt, run, goals }
}

fn parents(dir: &Path, commit: &str) -> usize {
    sh(dir, &format!("git rev-list --parents -n 1 {commit}"))
        .split_whitespace()
        .count()
        - 1
}

#[test]
fn goals_cut_from_the_runs_branch_merge_back_and_the_checkout_is_untouched() {
    let t = two_goals([("b.txt", "from a\n"), ("c.txt", "from b\n")]);
    let checkout_head = sh(&t.f.repo, "git rev-parse main");
    for goal in &t.goals {
        let merged =
            t.rt.block_on(
                t.run
                    .merge(&goal.branch, "tether: merge goal\n", OnConflict::Abort),
            )
            .unwrap();
        let Merge::Merged { commit } = merged else {
            panic!("{merged:?}")
        };
        assert_eq!(parents(&t.f.repo, &commit), 2, "a merge commit per goal");
    }
    assert_eq!(
        std::fs::read_to_string(t.run.dir.join("b.txt")).unwrap(),
        "from a\n"
    );
    assert_eq!(
        std::fs::read_to_string(t.run.dir.join("c.txt")).unwrap(),
        "from b\n"
    );
    // Merged again: nothing to do.
    let again =
        t.rt.block_on(
            t.run
                .merge(&t.goals[0].branch, "again\n", OnConflict::Abort),
        )
        .unwrap();
    assert_eq!(again, Merge::UpToDate);
    // The person's checkout and branch never moved.
    assert_eq!(sh(&t.f.repo, "git rev-parse main"), checkout_head);
    assert!(!t.f.repo.join("b.txt").exists());
    // (tether's own state directory aside, which the fixture keeps in the checkout)
    assert_eq!(sh(&t.f.repo, "git status --porcelain"), "?? .tether/\n");
}

#[test]
fn a_conflict_is_undone_or_left_for_the_agent_and_its_settling_commits_as_a_merge() {
    let t = two_goals([("a.txt", "a's line\n"), ("a.txt", "b's line\n")]);
    let [a, b] = &t.goals;
    let first =
        t.rt.block_on(t.run.merge(&a.branch, "merge a\n", OnConflict::Abort))
            .unwrap();
    assert!(matches!(first, Merge::Merged { .. }), "{first:?}");
    let before = t.rt.block_on(t.run.head()).unwrap();
    let second =
        t.rt.block_on(t.run.merge(&b.branch, "merge b\n", OnConflict::Abort))
            .unwrap();
    assert_eq!(
        second,
        Merge::Conflict {
            paths: vec!["a.txt".into()]
        }
    );
    // Undone: the run's branch and files as they were, no merge in progress.
    assert_eq!(t.rt.block_on(t.run.head()).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(t.run.dir.join("a.txt")).unwrap(),
        "a's line\n"
    );
    assert_eq!(sh(&t.run.dir, "git status --porcelain"), "");
    // The run's work brought into b's branch, the conflict left for b's agent.
    let left =
        t.rt.block_on(b.merge(&t.run.branch, "merge the run's work\n", OnConflict::Leave))
            .unwrap();
    assert_eq!(
        left,
        Merge::Conflict {
            paths: vec!["a.txt".into()]
        }
    );
    assert!(
        std::fs::read_to_string(b.dir.join("a.txt"))
            .unwrap()
            .contains("<<<<<<<")
    );
    // It settles the file; tether commits it as the merge.
    std::fs::write(b.dir.join("a.txt"), "a's line\nb's line\n").unwrap();
    let settled =
        t.rt.block_on(b.commit("settled\n", false, &t.f.with()))
            .unwrap()
            .unwrap();
    assert_eq!(parents(&t.f.repo, &settled), 2);
    assert_eq!(sh(&b.dir, "git status --porcelain"), "");
    // Now b merges cleanly.
    let merged =
        t.rt.block_on(t.run.merge(&b.branch, "merge b\n", OnConflict::Abort))
            .unwrap();
    assert!(matches!(merged, Merge::Merged { .. }), "{merged:?}");
    assert_eq!(
        std::fs::read_to_string(t.run.dir.join("a.txt")).unwrap(),
        "a's line\nb's line\n"
    );
}
