//! No grant follows a path the agent wrote. In a workspace that is not a repository the agent
//! can write a `.git` of its own — a file `gitdir: /etc/ssl`, one naming a directory whose
//! `commondir` is `/` or the home directory, a directory with such a `commondir`, a link to `/`
//! — and the next run's sandbox must grant nothing for it: `/` is not listed, the SSH key in the
//! home directory stays unreadable, and `/tmp` and the home directory stay covered (a socket the
//! test listens on in each cannot be connected to). The honest case beside it: a `--worktree`
//! run's commands still read the repository's objects, which tether itself put in place.

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use super::support::{Hostile, PROBE, assert_probes_in};
use crate::common::{text, unprivileged, wait_output};

/// What the agent leaves as `.git` in its first run, each a way to name `/` or the home
/// directory (`HOME` stands for it).
const POINTERS: [&str; 5] = [
    "printf 'gitdir: /etc/ssl\\n' > .git",
    "mkdir -p pointed && printf '/\\n' > pointed/commondir && printf 'gitdir: pointed\\n' > .git",
    "mkdir -p pointed && printf 'HOME\\n' > pointed/commondir && printf 'gitdir: pointed\\n' > .git",
    "mkdir -p .git && printf '/\\n' > .git/commondir && printf 'ref: refs/heads/main\\n' > .git/HEAD",
    "ln -s / .git",
];

/// The probes of the second run.
fn probes(home: &Path, tmux: &Path, agent: &Path) -> String {
    let connect = |socket: &Path| {
        format!(
            "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{}')\"",
            socket.display()
        )
    };
    format!(
        "{PROBE}\
         p 'list /' ls /\n\
         p 'read the ssh key' cat '{}'\n\
         p 'connect to the multiplexer in /tmp' {}\n\
         p 'connect to the ssh agent in the home directory' {}\n\
         p 'read the workspace' cat tether.toml\n",
        home.join(".ssh/id_ed25519").display(),
        connect(tmux),
        connect(agent),
    )
}

fn pointer(attack: &str, unprivileged_user: bool) {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    fs::create_dir(tmp.path().join("tmux-0")).unwrap();
    fs::create_dir(home.path().join(".ssh")).unwrap();
    fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let tmux = tmp.path().join("tmux-0/default");
    let agent = home.path().join(".ssh/agent.sock");
    let attack = attack.replace("HOME", &home.path().display().to_string());
    let runs = [
        vec![attack.clone()],
        vec![probes(home.path(), &tmux, &agent)],
    ];
    let h = Hostile::runs(home, &runs, "", false);
    let _listeners = [
        UnixListener::bind(&tmux).unwrap(),
        UnixListener::bind(&agent).unwrap(),
    ];
    if unprivileged_user && unprivileged::is_root() {
        unprivileged::chown_tree(tmp.path());
    }
    for run in 1..=2 {
        let out = wait_output(
            h.ralph(None, unprivileged_user)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{attack}, run {run}: {}",
            text(&out.stderr)
        );
        if run == 2 {
            h.assert_probes(
                &out,
                &[
                    "list /",
                    "read the ssh key",
                    "connect to the multiplexer in /tmp",
                    "connect to the ssh agent in the home directory",
                ],
                &["read the workspace"],
            );
        }
    }
}

#[test]
fn a_git_pointer_the_agent_wrote_grants_nothing_to_the_next_run() {
    for attack in POINTERS {
        pointer(attack, false);
    }
}

#[test]
fn nor_for_an_ordinary_user() {
    for attack in POINTERS {
        pointer(attack, true);
    }
}

/// The working tree of the one worktree run under `home`'s state directory.
fn worktree_of(home: &Path) -> PathBuf {
    let repos = home.join(".local/state/tether/worktrees");
    let repo = fs::read_dir(&repos)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let trees: Vec<PathBuf> = fs::read_dir(&repo)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(".git").is_file())
        .collect();
    assert_eq!(trees.len(), 1, "{trees:?}");
    trees[0].clone()
}

fn worktree(unprivileged_user: bool) {
    let script = format!(
        "{PROBE}\
         p 'read the objects' git cat-file -e HEAD\n\
         p 'log' git log --oneline\n\
         p 'status' git status --short\n\
         p 'write the repository' sh -c 'echo x > \"$(git rev-parse --git-common-dir)/planted\"'\n"
    );
    let h = Hostile::with_home(tempfile::tempdir().unwrap(), &[script], "");
    let out = wait_output(
        h.ralph(None, unprivileged_user)
            .arg("--worktree")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_probes_in(
        &worktree_of(h.home.path()),
        &out,
        &["write the repository"],
        &["read the objects", "log", "status"],
    );
}

#[test]
fn a_worktree_runs_commands_still_read_its_repository() {
    worktree(false);
}

#[test]
fn a_worktree_runs_commands_still_read_its_repository_as_an_ordinary_user() {
    worktree(true);
}
