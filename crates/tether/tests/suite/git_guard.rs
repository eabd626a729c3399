//! tether's own git never obeys the agent's git configuration: the built-in agent, scripted on
//! a fake model server, plants a program in git's configuration from its own shell — in a
//! repository it makes with `git init` where there was none, in a submodule whose `.git` it
//! points at a repository of its own, in a `--worktree` run's worktree (its `.git` file
//! replaced, its per-worktree configuration written) — then asks for the sign-off; or the
//! workspace's repository already names programs when the run begins (an agent made it in an
//! earlier run), one of them hidden before a megabyte of harmless drivers. tether's git (the
//! starting snapshot, the judge's diff, the report, the commit per goal) would run the planted
//! program as the person, writing a marker outside the workspace; it never does. The honest
//! cases still work: a repository with a submodule gets its diff, and so does one owned by
//! another user (whose objects are not borrowed). tether runs as an ordinary user (as `nobody`
//! when the tests run as root), and the attacks as root too.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;
use tether_model::scripted::{Script, Turn};

use super::goal_run::support::{Env, PLAN, accepting_judge, complete, env, fix_add};
use crate::common::{cmd, sh, text, unprivileged, wait_output};

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

/// `sh -c script` in `dir` as the tests' user, trusting the repository whoever owns it: what a
/// person's own git would run there.
fn plain_git(dir: &Path, script: &str) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "safe.directory")
        .env("GIT_CONFIG_VALUE_0", "*")
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

/// The starts pinned in tether's snapshot repository: `<tree> <run>` each.
fn pinned(e: &Env) -> Vec<String> {
    let out = Command::new("git")
        .args(["for-each-ref", "--format=%(objectname) %(refname:lstrip=3)"])
        .arg("refs/tether/runs/")
        .env("GIT_DIR", e.path().join(".tether/git"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "safe.directory")
        .env("GIT_CONFIG_VALUE_0", "*")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_owned).collect()
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
    tether_as(As::Ordinary, e, args, setup)
}

/// Who tether runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum As {
    /// As the tests do (root, here).
    Tests,
    /// As an ordinary user (`nobody` when the tests run as root).
    Ordinary,
}

/// `tether <args>` in the workspace as `who`, to its end.
fn tether_as(who: As, e: &Env, args: &[&str], setup: impl FnOnce(&mut Command)) -> Output {
    let mut c = match who {
        As::Tests => cmd(e.path(), args),
        As::Ordinary => {
            let mut c = unprivileged::tether(e.path());
            c.args(args);
            c
        }
    };
    setup(&mut c);
    wait_output(
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// A short `tether ralph` (one iteration: its starting snapshot and its report) as `who`.
fn ralph(who: As, e: &Env) -> Output {
    let args = [
        "ralph",
        "Tidy up.",
        "--completion-promise",
        "DONE",
        "--max-iterations",
        "1",
    ];
    tether_as(who, e, &args, |_| {})
}

/// The agent's turns for a `tether ralph` that keeps its promise at once.
fn promise() -> Turn {
    Turn::text("Tidy. <promise>DONE</promise>")
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

/// In a directory that is no repository, the agent makes one and plants programs in its
/// configuration and attributes during the run: neither that run's sign-off nor the next run
/// (its starting snapshot, its report) runs any of them, and the honest diff is there.
#[test]
fn a_repository_the_agent_makes_where_there_was_none_never_gets_git_run_in_it() {
    for who in [As::Ordinary, As::Tests] {
        let marks = Marks::new();
        let attack = format!(
            "git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -q -m x \
             && git config core.fsmonitor '{}; false' \
             && git config filter.evil.clean '{}; cat' \
             && git config diff.evil.textconv '{}; cat' \
             && printf '* filter=evil diff=evil\\n' > .gitattributes \
             && echo notes > notes.txt && echo planted",
            marks.touch("fsmonitor"),
            marks.touch("clean"),
            marks.touch("textconv"),
        );
        let mut turns = vec![
            fix_add(),
            Turn::tool("bash", json!({"command": attack})),
            complete("add"),
            Turn::text("Fixed add."),
        ];
        turns.push(promise());
        let e = env(
            PLAN,
            Script::turns(turns),
            Script::turns(accepting_judge()),
            "",
        );
        let out = tether_as(
            who,
            &e,
            &["run", "--approve", "--max-iterations", "3"],
            |_| {},
        );
        assert_planted(&e);
        assert_eq!(
            marks.left(),
            Vec::<String>::new(),
            "{who:?}: {}",
            text(&out.stderr)
        );
        let saw = judge_saw(&e);
        assert!(
            saw.contains("changes since the run began") && saw.contains("- src/lib.rs: line 2"),
            "{who:?}: the judge got the diff since the run began: {saw}"
        );
        assert_eq!(out.status.code(), Some(0), "{who:?}: {}", text(&out.stderr));
        let run = e.store().latest_run().unwrap().unwrap();
        assert!(run.spec["start"]["tree"].is_string(), "{}", run.spec);
        assert_eq!(
            pinned(&e),
            [format!(
                "{} {}",
                run.spec["start"]["tree"].as_str().unwrap(),
                run.id
            )],
            "{who:?}: the run's start is pinned in tether's repository"
        );
        // The next run, in the repository the agent made.
        let next = ralph(who, &e);
        assert_eq!(
            next.status.code(),
            Some(0),
            "{who:?}: {}",
            text(&next.stderr)
        );
        assert_eq!(
            marks.left(),
            Vec::<String>::new(),
            "{who:?}: {}",
            text(&next.stderr)
        );
        // The plain git of a person in that repository would have run them: the test can fail.
        plain_git(
            e.path(),
            "git status >/dev/null; git add -A; git diff --cached >/dev/null; true",
        );
        assert!(!marks.left().is_empty(), "plain git ran none of them");
    }
}

/// The workspace's repository, when the run begins, defines a filter for every file and then
/// more than a megabyte of harmless drivers: a listing of drivers cut at a megabyte would leave
/// the first one armed. tether's git reads none of that configuration: neither a Ralph run
/// (its starting snapshot, its report) nor a goal run's sign-off runs the filter.
#[test]
fn a_filter_hidden_before_a_megabyte_of_drivers_never_runs() {
    for who in [As::Ordinary, As::Tests] {
        let marks = Marks::new();
        let mut turns = vec![promise()];
        turns.extend([fix_add(), complete("add"), Turn::text("Fixed add.")]);
        let e = env(
            PLAN,
            Script::turns(turns),
            Script::turns(accepting_judge()),
            "",
        );
        repository(e.path());
        sh(
            e.path(),
            &format!(
                "git config filter.evil.clean '{}; cat' \
                 && printf '* filter=evil\\n' > .gitattributes",
                marks.touch("clean")
            ),
        );
        let config = e.path().join(".git/config");
        let mut text_of = fs::read_to_string(&config).unwrap();
        text_of.push_str("[filter \"harmless\"]\n");
        // Each listed as `filter.harmless.clean` and a NUL: well over a megabyte.
        text_of.push_str(&"\tclean = cat\n".repeat(60_000));
        fs::write(&config, text_of).unwrap();
        let out = ralph(who, &e);
        assert_eq!(out.status.code(), Some(0), "{who:?}: {}", text(&out.stderr));
        assert_eq!(
            marks.left(),
            Vec::<String>::new(),
            "{who:?}: {}",
            text(&out.stderr)
        );
        let out = tether_as(
            who,
            &e,
            &["run", "--approve", "--max-iterations", "3"],
            |_| {},
        );
        assert_eq!(out.status.code(), Some(0), "{who:?}: {}", text(&out.stderr));
        assert_eq!(
            marks.left(),
            Vec::<String>::new(),
            "{who:?}: {}",
            text(&out.stderr)
        );
        assert!(
            judge_saw(&e).contains("src/lib.rs | 2"),
            "{}",
            judge_saw(&e)
        );
        plain_git(e.path(), "git add -A; true");
        assert!(!marks.left().is_empty(), "plain git ran it");
    }
}

/// The workspace's repository names programs when the run begins (an agent made it in an
/// earlier run): a filter, a textconv and a file-system monitor. None runs.
#[test]
fn a_repository_naming_programs_when_the_run_begins_runs_none_of_them() {
    for who in [As::Ordinary, As::Tests] {
        let marks = Marks::new();
        let mut turns = vec![promise()];
        turns.extend([fix_add(), complete("add"), Turn::text("Fixed add.")]);
        let e = env(
            PLAN,
            Script::turns(turns),
            Script::turns(accepting_judge()),
            "",
        );
        repository(e.path());
        sh(
            e.path(),
            &format!(
                "git config filter.evil.clean '{}; cat' && git config diff.evil.textconv '{}; cat' \
                 && git config core.fsmonitor '{}; false' \
                 && printf '* filter=evil diff=evil\\n' > .gitattributes",
                marks.touch("clean"),
                marks.touch("textconv"),
                marks.touch("fsmonitor"),
            ),
        );
        let out = ralph(who, &e);
        assert_eq!(out.status.code(), Some(0), "{who:?}: {}", text(&out.stderr));
        let out = tether_as(
            who,
            &e,
            &["run", "--approve", "--max-iterations", "3"],
            |_| {},
        );
        assert_eq!(out.status.code(), Some(0), "{who:?}: {}", text(&out.stderr));
        assert_eq!(
            marks.left(),
            Vec::<String>::new(),
            "{who:?}: {}",
            text(&out.stderr)
        );
        assert!(
            judge_saw(&e).contains("src/lib.rs | 2"),
            "{}",
            judge_saw(&e)
        );
        plain_git(
            e.path(),
            "git status >/dev/null; git add -A; git diff --cached >/dev/null; true",
        );
        assert!(!marks.left().is_empty(), "plain git ran them");
    }
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
    assert!(judge_saw(&e).contains("changes since the run began"));
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
    assert!(saw.contains("changes since the run began"), "{saw}");
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

/// A repository owned by another user: tether never reads its configuration, so its ownership
/// is no reason to refuse a diff (the judge gets it), but its objects are not borrowed (tether's
/// snapshot repository keeps its own). Only as root can the tests make one.
#[test]
fn a_repository_owned_by_another_user_gets_its_diff_without_lending_its_objects() {
    if !unprivileged::is_root() {
        eprintln!("skipped: only root can give the repository to another user");
        return;
    }
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
        Script::turns(accepting_judge()),
        "",
    );
    repository(e.path());
    let git_dir: PathBuf = e.path().join(".git");
    let out = tether(&e, &["run", "--approve", "--max-iterations", "3"], |_| {
        // Handed to the unprivileged user with the workspace: the repository goes back to root.
        std::os::unix::fs::chown(&git_dir, Some(0), Some(0)).unwrap();
    });
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let saw = judge_saw(&e);
    assert!(
        saw.contains("changes since the run began") && saw.contains("src/lib.rs | 2"),
        "{saw}"
    );
    assert!(
        !e.path()
            .join(".tether/git/objects/info/alternates")
            .exists(),
        "another user's objects are not borrowed"
    );
}

/// The person asked for their hooks (`[run] commit_hooks = true`) in a `--worktree` run: the
/// commit of the signed-off goal runs their `pre-commit` — tooling that reads the agent's files
/// — in a sandbox: it writes the worktree, but neither a directory outside nor the network is
/// reached. With the run's sandbox off, the same hook reaches both (the test can fail).
#[test]
fn a_worktree_runs_hooks_run_in_a_sandbox_of_their_own() {
    for (who, sandbox) in [(As::Ordinary, ""), (As::Tests, ""), (As::Tests, "off")] {
        let marks = Marks::new();
        let state = tempfile::tempdir().unwrap();
        fs::set_permissions(state.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = match sandbox {
            "off" => "[sandbox]\nmode = \"off\"\n",
            _ => "",
        };
        let e = env(
            PLAN,
            Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
            Script::turns(accepting_judge()),
            &format!("{mode}[run]\ncommit_hooks = true\n"),
        );
        repository(e.path());
        let hook = format!(
            "#!/bin/sh\necho ran >> hook.ran\n{} 2>/dev/null\n\
             bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null\nexit 0\n",
            marks.touch("outside"),
        );
        let hooks = e.path().join(".git/hooks");
        fs::write(hooks.join("pre-commit"), hook).unwrap();
        fs::set_permissions(hooks.join("pre-commit"), fs::Permissions::from_mode(0o755)).unwrap();
        let out = tether_as(
            who,
            &e,
            &["run", "--approve", "--worktree", "--max-iterations", "3"],
            |c| {
                c.env("XDG_STATE_HOME", state.path());
            },
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{who:?} {sandbox}: {stderr}");
        assert!(
            stderr.contains("committed goal add on tether/"),
            "{who:?} {sandbox}: {stderr}"
        );
        let at = stderr.find("on tether/").unwrap() + "on tether/".len();
        let run = stderr[at..].split_whitespace().next().unwrap();
        let run = run.trim_end_matches(|c: char| !c.is_alphanumeric());
        let worktrees = state.path().join("tether/worktrees");
        let tree = fs::read_dir(&worktrees)
            .unwrap()
            .map(|d| d.unwrap().path().join(run))
            .find(|p| p.is_dir())
            .unwrap_or_else(|| panic!("no worktree of {run} under {}", worktrees.display()));
        assert!(
            tree.join("hook.ran").is_file(),
            "{who:?} {sandbox}: the hook ran"
        );
        let connected = listener.accept().is_ok();
        if sandbox == "off" {
            assert_eq!(
                marks.left(),
                ["outside"],
                "unconfined, the hook writes outside"
            );
            assert!(connected, "unconfined, the hook reaches the network");
        } else {
            assert_eq!(marks.left(), Vec::<String>::new(), "{who:?}: {stderr}");
            assert!(!connected, "{who:?}: the hook reached the network");
        }
    }
}
