//! A person's acts carry the person's name: `[human] name`, else git's `user.name` from their
//! own git configuration, else `$USER` — in the store (approvals, answers), the plan log and
//! the question history. Never "unknown", never the channel's name.

use std::fs;
use std::path::Path;
use std::process::Command;

use tether_store::Store;

use crate::common::pty::Pty;
use crate::common::{cmd, text};

const PLAN: &str = "# Plan: numbers\n\n## Goal: Add numbers\n<!-- id: add -->\nstatus: active\n\
done_when: `add` returns the sum\nverify: sh check.sh\nfailure_modes:\n- a\n- b\n\n\
- [ ] fix add\n\n## Log\n";

fn workspace(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    fs::write(dir.path().join("plan.md"), PLAN).unwrap();
    dir
}

fn approved_by(dir: &Path) -> String {
    let store = Store::open(dir.join(".tether/tether.db")).unwrap();
    store
        .approval("plan.md", "add")
        .unwrap()
        .unwrap()
        .approved_by
}

fn approve(dir: &Path, setup: impl FnOnce(&mut Command)) -> String {
    let mut c = cmd(dir, &["plan", "approve", "--all"]);
    setup(&mut c);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    approved_by(dir)
}

#[test]
fn the_configured_name_then_gits_then_the_login_name_an_approval() {
    let named = workspace("[human]\nname = \"Ana Lima\"\n");
    assert_eq!(approve(named.path(), |_| {}), "Ana Lima");

    let git = tempfile::tempdir().unwrap();
    let gitconfig = git.path().join("gitconfig");
    fs::write(&gitconfig, "[user]\n\tname = Bo Git\n").unwrap();
    let unnamed = workspace("");
    let by = approve(unnamed.path(), |c| {
        c.env("GIT_CONFIG_GLOBAL", &gitconfig).env_remove("USER");
    });
    assert_eq!(by, "Bo Git");

    let login = workspace("");
    assert_eq!(approve(login.path(), |_| {}), "tester");

    let nothing = workspace("");
    let by = approve(nothing.path(), |c| {
        c.env_remove("USER").env_remove("LOGNAME");
    });
    assert_eq!(by, "a person", "never `unknown`");
}

#[test]
fn a_repositorys_own_git_configuration_never_names_the_person() {
    let dir = workspace("");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "Planted By Agent"]);
    assert_eq!(approve(dir.path(), |_| {}), "tester");
}

#[test]
fn an_answer_typed_on_the_terminal_and_a_cancel_carry_the_name() {
    let dir = workspace("[human]\nname = \"Ana Lima\"\n");
    let mut t = Pty::start(dir.path(), "ask 'Ship it?'");
    t.wait_for("Your answer: ");
    t.type_line("yes");
    let (code, screen) = t.wait();
    assert_eq!(code, 0, "{screen}");
    let history = text(&cmd(dir.path(), &["history"]).output().unwrap().stdout);
    assert!(
        history.contains("→ yes — Ana Lima via terminal"),
        "{history}"
    );

    let out = cmd(
        dir.path(),
        &["goal", "cancel", "add", "--reason", "not needed"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let plan = fs::read_to_string(dir.path().join("plan.md")).unwrap();
    assert!(
        plan.contains("add cancelled by Ana Lima: not needed"),
        "{plan}"
    );
}

#[test]
fn a_name_that_is_not_one_line_is_refused_naming_the_key() {
    let dir = workspace("[human]\nname = \"\"\n");
    let out = cmd(dir.path(), &["validate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains("human.name: must not be empty"),
        "{}",
        text(&out.stdout)
    );
}
