//! The second wall around git on a person's repository: a program git were made to run (here
//! `core.fsmonitor`, which the neutralised configuration would turn off, forced on the command
//! line with that neutralisation left out) writes only what its command may write and reaches
//! no network; unconfined, the same program writes everywhere and connects (so the tests can
//! fail). And the honest cases: discovery finds every kind of checkout from its sandbox, and
//! `git worktree prune` keeps the records of the person's other worktrees.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use tokio_util::sync::CancellationToken;

use crate::command::{Setting, exec};
use crate::{Confinement, Found, GitCommand, GitRepo, Writes, discover};

/// The branch the commands that write one write.
const BRANCH: &str = "refs/heads/tether/r-1";

fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A checkout at `dir/repo` with a commit and a linked worktree at `dir/trees/wt` (on branch
/// `wt`), plus an empty `dir/trees/new` (a worktree about to be added) and `dir/outside`.
struct Place {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    common: PathBuf,
    tree: PathBuf,
    tree_git: PathBuf,
    new: PathBuf,
    outside: PathBuf,
}

fn place() -> Place {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let repo = root.join("repo");
    for dir in [&repo, &root.join("trees/new"), &root.join("outside")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    sh(
        &repo,
        "git init -q -b main && git config user.name t && git config user.email t@x \
         && echo one > a.txt && git add -A && git commit -q -m one \
         && git worktree add -q -b wt ../trees/wt \
         && mkdir -p .git/refs/heads/tether .git/logs/refs/heads/tether",
    );
    Place {
        common: repo.join(".git"),
        tree: root.join("trees/wt"),
        tree_git: repo.join(".git/worktrees/wt"),
        new: root.join("trees/new"),
        outside: root.join("outside"),
        repo,
        _tmp: tmp,
    }
}

impl Place {
    /// The linked worktree as tether names it to git.
    fn worktree(&self, confinement: Confinement) -> GitRepo {
        GitRepo {
            git_dir: self.tree_git.clone(),
            work_tree: self.tree.clone(),
            common_dir: self.common.clone(),
            confinement,
        }
    }

    /// Where the hostile program tries to write, by name.
    fn targets(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("config", self.common.join("config")),
            ("hooks", self.common.join("hooks/hostile")),
            ("HEAD-dir", self.common.join("hostile")),
            ("records", self.common.join("worktrees/hostile")),
            ("refs", self.common.join("refs/hostile")),
            ("logs", self.common.join("logs/hostile")),
            ("main", self.common.join("refs/heads/main")),
            ("branch-dir", self.common.join("refs/heads/tether/hostile")),
            (
                "branch-log-dir",
                self.common.join("logs/refs/heads/tether/hostile"),
            ),
            ("objects", self.common.join("objects/hostile")),
            ("own-git-dir", self.tree_git.join("hostile")),
            ("work-tree", self.tree.join("hostile")),
            ("checkout", self.repo.join("hostile")),
            ("new-worktree", self.new.join("hostile")),
            ("outside", self.outside.join("hostile")),
        ]
    }
}

/// `git status` in the worktree with `core.fsmonitor` forced to a program that appends to
/// every target and connects to `port`, in the sandbox `writes` gives (no neutralisation: the
/// program runs). The names of the targets it wrote, and whether it connected.
async fn hostile_status(
    place: &Place,
    confinement: Confinement,
    writes: Writes,
) -> (Vec<&'static str>, bool) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let targets = place.targets();
    let mut program = String::new();
    for (_, path) in &targets {
        program.push_str(&format!(
            "echo '# hostile' >> '{}' 2>/dev/null; ",
            path.display()
        ));
    }
    program.push_str(&format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null; false"
    ));
    let repo = place.worktree(confinement);
    let cmd = GitCommand::new(&place.tree, &["status", "--porcelain"]).writes(writes);
    let sandbox = repo.sandbox_for(&cmd).unwrap();
    let config = vec![("core.fsmonitor".to_owned(), program)];
    let setting = Setting {
        pinned: Some((&repo.git_dir, &repo.work_tree)),
        config: &config,
        sandbox: sandbox.as_ref(),
        ..Setting::default()
    };
    let out = exec(&cmd, &setting, &CancellationToken::new())
        .await
        .unwrap();
    assert!(out.ok(), "{out:?}");
    let wrote = targets
        .iter()
        .filter(|(_, path)| {
            std::fs::read_to_string(path).is_ok_and(|text| text.contains("# hostile"))
        })
        .map(|(name, _)| *name)
        .collect();
    let connected = listener.accept().is_ok();
    (wrote, connected)
}

#[tokio::test]
async fn a_program_git_runs_writes_only_what_its_command_may_and_reaches_no_network() {
    let records = ["records", "own-git-dir"];
    // The branch `refs/heads/tether/r-1`: the directories of its ref and its log.
    let refs = ["branch-dir", "branch-log-dir"];
    /// What the command writes, made for a place, and the targets it may write.
    type Case = (&'static str, fn(&Place) -> Writes, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("nothing", |_| Writes::Nothing, vec![]),
        ("records", |_| Writes::Records, records.to_vec()),
        (
            "a new worktree",
            |p| Writes::NewWorktree {
                dir: p.new.clone(),
                branch: BRANCH.to_owned(),
            },
            [&records[..], &refs[..], &["new-worktree"]].concat(),
        ),
        (
            "refs",
            |_| Writes::Ref(BRANCH.to_owned()),
            [&refs[..], &["own-git-dir"]].concat(),
        ),
        (
            "a commit",
            |_| Writes::Commit(BRANCH.to_owned()),
            [&refs[..], &["objects", "own-git-dir", "work-tree"]].concat(),
        ),
    ];
    for (what, writes, allowed) in cases {
        let place = place();
        let (mut wrote, connected) =
            hostile_status(&place, Confinement::Sandboxed, writes(&place)).await;
        wrote.sort_unstable();
        let mut allowed = allowed;
        allowed.sort_unstable();
        assert_eq!(wrote, allowed, "{what}: written");
        assert!(!connected, "{what}: reached the network");
        assert!(
            !sh(&place.common, "cat config").contains("hostile"),
            "{what}: the repository's configuration"
        );
    }
    // Unconfined (the run's sandbox off), the same program writes everything and connects.
    let place = place();
    let (wrote, connected) = hostile_status(&place, Confinement::Unconfined, Writes::Nothing).await;
    assert_eq!(wrote.len(), place.targets().len(), "{wrote:?}");
    assert!(connected);
}

/// git finds the repository from its sandbox wherever it starts: the checkout's top, a
/// directory inside it, a linked worktree (its `.git` a file naming the git directory); and
/// none where there is none.
#[tokio::test]
async fn the_repository_is_found_from_the_sandbox_in_every_kind_of_checkout() {
    let place = place();
    std::fs::create_dir_all(place.repo.join("sub/dir")).unwrap();
    let cancel = CancellationToken::new();
    let found = |dir: PathBuf| {
        let cancel = cancel.clone();
        async move {
            match discover(&dir, Confinement::Sandboxed, &[], &cancel)
                .await
                .unwrap()
            {
                Found::Repo(repo) => repo,
                Found::NotARepository(why) => panic!("{}: {why}", dir.display()),
            }
        }
    };
    for dir in [place.repo.clone(), place.repo.join("sub/dir")] {
        let repo = found(dir).await;
        assert_eq!(repo.git_dir, place.common);
        assert_eq!(repo.common_dir, place.common);
        assert_eq!(repo.work_tree, place.repo);
        assert_eq!(repo.confinement, Confinement::Sandboxed);
    }
    let linked = found(place.tree.clone()).await;
    assert_eq!(linked.git_dir, place.tree_git);
    assert_eq!(linked.common_dir, place.common);
    assert_eq!(linked.work_tree, place.tree);
    let none = discover(&place.outside, Confinement::Sandboxed, &[], &cancel)
        .await
        .unwrap();
    assert!(matches!(none, Found::NotARepository(_)), "{none:?}");
}

/// What discovery may read: the directory and the `.git` above it (and what a `.git` file
/// names), nothing to write.
#[test]
fn discovery_reads_only_the_directory_and_the_git_above_it() {
    let place = place();
    let reach = crate::person::discovery(&place.tree);
    assert!(reach.write.is_empty() && reach.read.is_empty() && reach.tmp.is_none());
    let granted = &reach.read_if_present;
    for want in [&place.tree, &place.tree.join(".git"), &place.tree_git] {
        assert!(
            granted.contains(want),
            "{} not in {granted:?}",
            want.display()
        );
    }
    // The shared directory, as the worktree's `commondir` names it (`../..`).
    assert!(
        granted
            .iter()
            .any(|p| std::fs::canonicalize(p).ok().as_ref() == Some(&place.common)),
        "{granted:?}"
    );
    assert!(
        granted.iter().all(|p| p.starts_with(&place.tree)
            || p.starts_with(&place.common)
            || p.file_name().is_some_and(|n| n == ".git")),
        "{granted:?}"
    );
}

/// `git worktree prune` in its sandbox drops the record of a worktree that is gone and keeps
/// those of the person's other worktrees, which lie where the sandbox covers (a temporary
/// directory, the home directory) — were they out of its sight, prune would take them for gone.
#[tokio::test]
async fn prune_keeps_the_records_of_worktrees_out_of_its_way_and_drops_the_gone() {
    let place = place();
    sh(&place.repo, "git worktree add -q -b gone ../trees/gone");
    std::fs::remove_dir_all(place.repo.join("../trees/gone")).unwrap();
    let checkout = GitRepo {
        git_dir: place.common.clone(),
        work_tree: place.repo.clone(),
        common_dir: place.common.clone(),
        confinement: Confinement::Sandboxed,
    };
    let prune = GitCommand::new(&place.repo, &["worktree", "prune"]).writes(Writes::Records);
    let out = checkout
        .run(&prune, &CancellationToken::new())
        .await
        .unwrap();
    assert!(out.ok(), "{out:?}");
    assert!(place.tree_git.is_dir(), "the person's worktree's record");
    assert!(!place.common.join("worktrees/gone").exists());
    assert!(sh(&place.repo, "git worktree list").contains("trees/wt"));
}

/// Where the kernel cannot enforce the sandbox (no Landlock), a command on the person's
/// repository gets none: it does not run, rather than run outside one.
#[test]
fn a_command_that_cannot_have_its_sandbox_is_not_run() {
    let place = place();
    let repo = place.worktree(Confinement::Sandboxed);
    let cmd = GitCommand::new(&place.tree, &["status"]).writes(Writes::Commit(BRANCH.to_owned()));
    let reach = repo.reach(&cmd).unwrap();
    let old = tether_sandbox::Support {
        landlock_abi: 0,
        namespaces: true,
    };
    let got = Confinement::Sandboxed.sandbox_on(&reach, old);
    assert!(
        matches!(got, Err(crate::GitError::NoSandbox { .. })),
        "{got:?}"
    );
}

/// git in the sandbox looks for the repository up to the real edge of the file system it
/// starts on, as it does outside: a directory of `/proc` stops at `/`; the mounts the sandbox
/// makes of what it grants are crossed.
#[test]
fn discovery_stops_at_the_real_edge_of_the_file_system() {
    let env = crate::person::discovery_edge(Path::new("/proc/self"));
    assert_eq!(
        env,
        [
            ("GIT_DISCOVERY_ACROSS_FILESYSTEM".to_owned(), "1".to_owned()),
            ("GIT_CEILING_DIRECTORIES".to_owned(), "/".to_owned()),
        ]
    );
}
