//! tether's own git never obeys the agent's git configuration: the built-in agent, scripted on
//! a fake model server, plants a program in git's configuration from its own shell — in a
//! repository it makes with `git init` where there was none, in a submodule whose `.git` it
//! points at a repository of its own, in a `--worktree` run's worktree (its `.git` file
//! replaced, its per-worktree configuration written) — then asks for the sign-off. tether's
//! git (the judge's diff, the commit per goal) runs outside the sandbox as the person, so the
//! planted program would write a marker outside the workspace; it never does. The honest cases
//! still work: a repository with a submodule gets its diff, a repository owned by another user
//! gets none unless the person's `safe.directory` trusts it. tether runs as an ordinary user
//! (as `nobody` when the tests run as root).

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;
use tether_model::scripted::{Script, Turn};

use super::goal_run::support::{Env, PLAN, accepting_judge, complete, env, fix_add};
use crate::common::{text, unprivileged, wait_output};

/// A directory outside the workspace that anyone may write: where a planted program leaves its
/// marker.
struct Marks(tempfile::TempDir);

impl Marks {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        Marks(dir)
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// `touch <marks>/<name>`, the planted program.
    fn touch(&self, name: &str) -> String {
        format!("touch {}", self.path().join(name).display())
    }

    /// The markers left: none, when no planted program ran.
    fn left(&self) -> Vec<String> {
        fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

/// `sh -c script` in `dir` as the test's user, with no git configuration but the repository's.
fn sh(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {}", text(&out.stderr));
}

/// Makes `dir` a repository with everything committed.
fn repository(dir: &Path) {
    sh(
        dir,
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && printf '.tether/\\n' > .gitignore && git add -A && git commit -q -m start",
    );
}

/// Adds a submodule at `vendor/dep` (from a repository beside the workspace) and commits it.
fn with_submodule(dir: &Path, origin: &Path) {
    sh(
        origin,
        "git init -q -b main && git config user.name Bo && git config user.email bo@example.com \
         && echo 'dep' > dep.txt && git add -A && git commit -q -m dep",
    );
    sh(
        dir,
        &format!(
            "git -c protocol.file.allow=always submodule add -q {} vendor/dep \
             && git commit -q -m 'the dependency'",
            origin.display()
        ),
    );
}

/// The agent: fixes `add`, runs `attack` in its shell, asks for the sign-off.
fn hostile(attack: String) -> Script {
    Script::turns([
        fix_add(),
        Turn::tool("bash", json!({"command": attack})),
        complete("add"),
        Turn::text("Fixed add."),
    ])
}

/// `tether <args>` in the workspace as an ordinary user, to its end.
fn tether(e: &Env, args: &[&str], setup: impl FnOnce(&mut Command)) -> Output {
    let mut c = unprivileged::tether(e.path());
    c.args(args);
    setup(&mut c);
    wait_output(
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// Everything the judge was sent.
fn judge_saw(e: &Env) -> String {
    e.judge
        .requests()
        .iter()
        .map(|r| r.raw_body.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The agent's shell ran the attack (its tool result says `planted`).
fn assert_planted(e: &Env) {
    let results: String = e
        .agent
        .requests()
        .iter()
        .map(|r| r.raw_body.clone())
        .collect();
    assert!(results.contains("planted"), "the attack ran: {results}");
}

#[test]
fn a_repository_the_agent_makes_where_there_was_none_never_gets_git_run_in_it() {
    let marks = Marks::new();
    let attack = format!(
        "git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -q -m x \
         && git config core.fsmonitor '{}; false' && echo notes > notes.txt \
         && echo planted",
        marks.touch("fsmonitor")
    );
    let e = env(PLAN, hostile(attack), Script::turns(accepting_judge()), "");
    let out = tether(&e, &["run", "--approve", "--max-iterations", "3"], |_| {});
    assert_planted(&e);
    assert_eq!(marks.left(), Vec::<String>::new(), "{}", text(&out.stderr));
    let saw = judge_saw(&e);
    assert!(
        saw.contains("not a git repository (when the run began"),
        "the judge was told there is no diff: {saw}"
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The run recorded that it began in no repository, so a resume runs no git either.
    let run = e.store().latest_run().unwrap().unwrap();
    assert_eq!(run.spec["git"], serde_json::Value::Null, "{}", run.spec);
}

#[test]
fn a_submodule_pointed_at_the_agents_repository_is_never_entered() {
    let marks = Marks::new();
    let origin = tempfile::tempdir().unwrap();
    let attack = format!(
        "cd vendor/dep && rm .git && git init -q && git add -A \
         && git -c user.name=a -c user.email=a@b commit -q -m x \
         && git config core.fsmonitor '{}; false' && echo changed >> dep.txt && echo planted",
        marks.touch("fsmonitor")
    );
    let e = env(PLAN, hostile(attack), Script::turns(accepting_judge()), "");
    repository(e.path());
    with_submodule(e.path(), origin.path());
    let out = tether(&e, &["run", "--approve", "--max-iterations", "3"], |_| {});
    assert_planted(&e);
    assert_eq!(marks.left(), Vec::<String>::new(), "{}", text(&out.stderr));
    assert!(judge_saw(&e).contains("git diff --stat HEAD:"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn an_honest_repository_with_a_submodule_gets_its_diff() {
    let origin = tempfile::tempdir().unwrap();
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
        Script::turns(accepting_judge()),
        "",
    );
    repository(e.path());
    with_submodule(e.path(), origin.path());
    let out = tether(&e, &["run", "--approve", "--max-iterations", "3"], |_| {});
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let saw = judge_saw(&e);
    assert!(saw.contains("git diff --stat HEAD:"), "{saw}");
    assert!(saw.contains("src/lib.rs | 2"), "{saw}");
}

/// A `--worktree` run without the sandbox (which would keep the worktree's `.git` read-only):
/// the agent writes the worktree's own configuration and replaces its `.git` file with a
/// repository of its own; tether's commit runs neither's program and lands on the run's branch.
#[test]
fn a_worktrees_replaced_dot_git_and_its_own_configuration_are_not_obeyed() {
    let marks = Marks::new();
    let state = tempfile::tempdir().unwrap();
    fs::set_permissions(state.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let attack = format!(
        "git config extensions.worktreeConfig true \
         && git config --worktree core.fsmonitor '{wt}; false' \
         && mkdir -p ../hooks && printf '#!/bin/sh\\n{hook}\\n' > ../hooks/pre-commit \
         && chmod +x ../hooks/pre-commit && git config --worktree core.hooksPath \"$(cd ..; pwd)/hooks\" \
         && rm .git && git init -q && git add -A \
         && git -c user.name=a -c user.email=a@b commit -q -m x \
         && git config core.fsmonitor '{own}; false' && echo planted",
        wt = marks.touch("worktree-config"),
        hook = marks.touch("hook"),
        own = marks.touch("replaced-dot-git"),
    );
    let e = env(
        PLAN,
        hostile(attack),
        Script::turns(accepting_judge()),
        "[sandbox]\nmode = \"off\"\n",
    );
    repository(e.path());
    let out = tether(
        &e,
        &["run", "--approve", "--worktree", "--max-iterations", "3"],
        |c| {
            c.env("XDG_STATE_HOME", state.path());
        },
    );
    assert_planted(&e);
    let stderr = text(&out.stderr);
    assert_eq!(marks.left(), Vec::<String>::new(), "{stderr}");
    assert!(stderr.contains("committed goal add on tether/"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// A repository owned by another user: git's ownership check stands (no diff, the judge is told
/// so) unless the person's `safe.directory` trusts it. Only as root can the tests make one.
#[test]
fn a_repository_owned_by_another_user_is_refused_unless_the_person_trusts_it() {
    if !unprivileged::is_root() {
        eprintln!("skipped: only root can give the repository to another user");
        return;
    }
    let trusted = tempfile::tempdir().unwrap();
    for trust in [false, true] {
        let e = env(
            PLAN,
            Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
            Script::turns(accepting_judge()),
            "",
        );
        repository(e.path());
        let global = trusted.path().join(format!("gitconfig-{trust}"));
        let entry = if trust {
            format!("[safe]\n\tdirectory = {}\n", e.path().display())
        } else {
            String::new()
        };
        fs::write(&global, entry).unwrap();
        fs::set_permissions(trusted.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let git_dir: PathBuf = e.path().join(".git");
        let out = tether(&e, &["run", "--approve", "--max-iterations", "3"], |c| {
            c.env("GIT_CONFIG_GLOBAL", &global);
            // Handed to the unprivileged user with the workspace: the repository goes back to
            // root.
            std::os::unix::fs::chown(&git_dir, Some(0), Some(0)).unwrap();
        });
        let saw = judge_saw(&e);
        if trust {
            assert!(saw.contains("git diff --stat HEAD:"), "trusted: {saw}");
        } else {
            assert!(
                saw.contains("not a git repository (when the run began"),
                "refused: {saw}"
            );
        }
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}
