//! `tether run --worktree`: each run works on a branch `tether/<run-id>` in a worktree of its
//! own outside the checkout, commits each signed-off goal there, and never writes the checkout
//! (its uncommitted changes included). Resume after kill -9 finds the worktree again; a live
//! run's worktree cannot be removed.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use super::goal_run::support::{
    PLAN, SECOND_GOAL, accepting_judge, complete, env, fix_add, verdict,
};
use crate::common::{PATIENCE, cmd, model_table, runtime, sh, text, wait_output};

/// Makes `dir` a repository with everything committed by Ana, then leaves an uncommitted change
/// and an untracked file in it.
fn repository(dir: &Path) {
    sh(
        dir,
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && printf '.tether/\\n' > .gitignore && git add -A && git commit -q -m start \
         && echo 'work in progress' >> check.sh && echo 'notes' > notes.txt",
    );
}

/// Every file of the checkout but `.git/` and tether's `.tether/`, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            if name == ".git" || name == ".tether" {
                continue;
            }
            if path.is_dir() {
                todo.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().to_owned(),
                    fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
}

/// `tether <args>` in `dir` with worktrees under `state`.
fn tether(dir: &Path, state: &Path, args: &[&str]) -> Command {
    let mut c = cmd(dir, args);
    c.env("XDG_STATE_HOME", state);
    c
}

fn run_id(stderr: &str) -> String {
    let at = stderr.find("goal run r-").expect(stderr) + "goal run ".len();
    stderr[at..].split_whitespace().next().unwrap().to_owned()
}

fn git_show(dir: &Path, what: &str) -> String {
    sh(dir, &format!("git log -1 --format='%an <%ae>%n%B' {what}"))
}

#[test]
fn a_worktree_run_commits_its_goal_on_its_branch_and_never_touches_the_checkout() {
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
        Script::turns(accepting_judge()),
        "",
    );
    repository(e.path());
    let state = tempfile::tempdir().unwrap();
    let before = files(e.path());
    let head = sh(e.path(), "git rev-parse main");
    let out = tether(
        e.path(),
        state.path(),
        &["run", "--approve", "--worktree", "--max-iterations", "3"],
    )
    .output()
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}{stderr}", text(&out.stdout));
    let run = run_id(&stderr);
    let branch = format!("tether/{run}");
    assert!(
        stderr.contains(&format!("committed goal add on {branch}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("merge it with `git merge {branch}`")),
        "{stderr}"
    );
    // The checkout, uncommitted change and untracked file included, is as it was.
    assert_eq!(files(e.path()), before);
    assert_eq!(sh(e.path(), "git rev-parse main"), head);
    assert_eq!(
        sh(e.path(), "git status --porcelain"),
        " M check.sh\n?? notes.txt\n"
    );
    // The branch has the fix, committed by the user's identity with the sign-off's record.
    let message = git_show(e.path(), &branch);
    let contract = e
        .verdicts("add")
        .last()
        .unwrap()
        .decision
        .contract_hash
        .clone()
        .unwrap();
    assert_eq!(
        message,
        format!(
            "Ana <ana@example.com>\nAdd numbers\n\n\
             Judge: accepted by the judge (judge-model): accepted after reading src/lib.rs\n\
             Verify: sh check.sh (exit 0)\n\
             Evidence:\n\
             - src/lib.rs: pub fn add(a: i32, b: i32) -> i32 {{ a + b\n\n\
             Tether-Run: {run}\nTether-Contract: {contract}\n\n"
        )
    );
    let changed = sh(e.path(), &format!("git diff --stat main {branch}"));
    assert!(changed.contains("src/lib.rs"), "{changed}");
    assert!(sh(e.path(), &format!("git show {branch}:src/lib.rs")).contains("a + b"));
    // tether shows where the run worked.
    let status = tether(e.path(), state.path(), &["status"])
        .output()
        .unwrap();
    assert!(
        text(&status.stdout).contains(&format!("branch {branch}")),
        "{}",
        text(&status.stdout)
    );
    let list = tether(e.path(), state.path(), &["worktree", "list"])
        .output()
        .unwrap();
    assert!(
        text(&list.stdout).contains(&format!("{run}  {branch}")),
        "{}",
        text(&list.stdout)
    );
    assert!(text(&list.stdout).contains("idle"));
}

/// A config and plan of their own (`<name>.toml`, `<name>.md`) on their own fake servers.
fn second_config(
    dir: &Path,
    name: &str,
    plan: &str,
    agent: &FakeModelServer,
    judge: &FakeModelServer,
) {
    fs::write(dir.join(format!("{name}.md")), plan).unwrap();
    fs::write(
        dir.join(format!("{name}.toml")),
        format!(
            "plan = \"{name}.md\"\n{}\n{}",
            model_table(
                "model",
                tether_config::Api::OpenAiChat,
                agent,
                "worker-model"
            ),
            model_table(
                "judge",
                tether_config::Api::OpenAiChat,
                judge,
                "judge-model"
            ),
        ),
    )
    .unwrap();
}

#[test]
fn two_runs_on_one_repository_work_side_by_side_each_on_its_branch() {
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
        Script::turns(accepting_judge()),
        "",
    );
    let rt = runtime();
    let double = Turn::tool(
        "edit",
        serde_json::json!({"path": "src/lib.rs", "old_text": "a - b\n}\n",
            "new_text": "a - b\n}\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n"}),
    );
    let agent_b = rt
        .block_on(FakeModelServer::start(Script::turns([
            double,
            complete("double"),
            Turn::text("Wrote double."),
        ])))
        .unwrap();
    let judge_b = rt
        .block_on(FakeModelServer::start(Script::turns([
            Turn::tool("read", serde_json::json!({"path": "src/lib.rs"})),
            verdict(
                "accept",
                "src/lib.rs",
                "pub fn double(x: i32) -> i32 {\n    x * 2",
                &[],
            ),
        ])))
        .unwrap();
    second_config(
        e.path(),
        "b",
        &format!("# Plan: b\n\n{SECOND_GOAL}## Log\n"),
        &agent_b,
        &judge_b,
    );
    repository(e.path());
    let state = tempfile::tempdir().unwrap();
    let before = files(e.path());
    let args = ["run", "--approve", "--worktree", "--max-iterations", "3"];
    let a = tether(e.path(), state.path(), &args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let b = tether(e.path(), state.path(), &args)
        .env("TETHER_CONFIG", e.path().join("b.toml"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (a, b): (Output, Output) = (wait_output(a), wait_output(b));
    for out in [&a, &b] {
        let report = fs::read_dir(e.path().join(".tether/runs"))
            .unwrap()
            .flatten()
            .map(|r| fs::read_to_string(r.path().join("report.md")).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}\n{report}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let (ra, rb) = (run_id(&text(&a.stderr)), run_id(&text(&b.stderr)));
    assert_ne!(ra, rb);
    let lib_a = sh(e.path(), &format!("git show tether/{ra}:src/lib.rs"));
    let lib_b = sh(e.path(), &format!("git show tether/{rb}:src/lib.rs"));
    assert!(
        lib_a.contains("a + b") && !lib_a.contains("double"),
        "{lib_a}"
    );
    assert!(
        lib_b.contains("x * 2") && !lib_b.contains("a + b"),
        "{lib_b}"
    );
    assert!(git_show(e.path(), &format!("tether/{ra}")).contains("\nAdd numbers\n"));
    assert!(git_show(e.path(), &format!("tether/{rb}")).contains("\nDouble numbers\n"));
    assert_eq!(files(e.path()), before);
}

#[test]
fn after_kill_9_resume_works_in_the_same_worktree_even_once_removed_and_a_live_one_stays() {
    let e = env(
        PLAN,
        Script::turns([
            Turn::tool(
                "bash",
                serde_json::json!({"command": "touch started && sleep 60"}),
            ),
            fix_add(),
            complete("add"),
            Turn::text("Fixed add."),
        ]),
        Script::turns(accepting_judge()),
        "",
    );
    repository(e.path());
    let state = tempfile::tempdir().unwrap();
    let mut first = tether(
        e.path(),
        state.path(),
        &["run", "--approve", "--worktree", "--max-iterations", "5"],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let started = wait_until("the agent's command to start", PATIENCE, || {
        glob_started(state.path())
    })
    .unwrap();
    let tree = started.parent().unwrap().to_owned();
    let run = tree.file_name().unwrap().to_string_lossy().into_owned();
    // While the run lives, its worktree stays.
    let refused = tether(e.path(), state.path(), &["worktree", "remove", &run])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("in use by the live run"),
        "{}",
        text(&refused.stderr)
    );
    assert!(tree.is_dir());
    first.kill().unwrap();
    first.wait().unwrap();
    // Gone by hand (the branch keeps the run's work): resume makes it again from the branch.
    fs::remove_dir_all(&tree).unwrap();
    let out = tether(e.path(), state.path(), &["resume", &run])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(tree.join("src/lib.rs").is_file());
    assert!(sh(e.path(), &format!("git show tether/{run}:src/lib.rs")).contains("a + b"));
    assert!(sh(e.path(), "git show main:src/lib.rs").contains("a - b"));
    // Idle now: it can go, and its branch stays.
    let removed = tether(e.path(), state.path(), &["worktree", "remove", &run])
        .output()
        .unwrap();
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    assert!(!tree.exists());
    assert!(sh(e.path(), "git branch --list").contains(&format!("tether/{run}")));
}

/// The `started` file the agent's command made in its worktree, if it is there yet.
fn glob_started(state: &Path) -> Option<PathBuf> {
    let repos = fs::read_dir(state.join("tether/worktrees")).ok()?;
    for repo in repos.flatten() {
        for run in fs::read_dir(repo.path()).ok()?.flatten() {
            let started = run.path().join("started");
            if started.exists() {
                return Some(started);
            }
        }
    }
    None
}

#[test]
fn a_ralph_run_in_a_worktree_commits_its_work_when_it_keeps_its_promise() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"command\"\n\
         command = [\"sh\", \"-c\", \"echo done > out.txt; echo '<promise>DONE</promise>'\"]\n",
    )
    .unwrap();
    fs::write(dir.path().join("README"), "a project\n").unwrap();
    repository(dir.path());
    let state = tempfile::tempdir().unwrap();
    let mut child = tether(
        dir.path(),
        state.path(),
        &[
            "ralph",
            "Write out.txt\nand stop",
            "--completion-promise",
            "DONE",
            "--worktree",
            "--events",
            "jsonl",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(fs::File::create(state.path().join("stderr")).unwrap())
    .spawn()
    .unwrap();
    // Whoever sees the run finish finds its work committed already: the branch's head is
    // looked at the moment the event arrives.
    let events = std::io::BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(events).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let head_when_finished = loop {
        let Ok(line) = rx.recv_timeout(PATIENCE) else {
            let _ = child.kill();
            panic!("no run_finished event within {PATIENCE:?}");
        };
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        if event["event"]["type"] == "run_finished" {
            let run = event["run_id"].as_str().unwrap();
            break sh(dir.path(), &format!("git log -1 --format=%s tether/{run}"));
        }
    };
    assert_eq!(head_when_finished, "Write out.txt\n");
    let status = crate::common::wait_exit(&mut child);
    let stderr = fs::read_to_string(state.path().join("stderr")).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let at = stderr.find("ralph run r-").expect(&stderr) + "ralph run ".len();
    let run = stderr[at..].split_whitespace().next().unwrap();
    assert!(
        stderr.contains(&format!("committed the run's work on tether/{run}")),
        "{stderr}"
    );
    assert_eq!(
        git_show(dir.path(), &format!("tether/{run}")),
        format!(
            "Ana <ana@example.com>\nWrite out.txt\n\nThe agent kept its completion promise.\n\n\
             Tether-Run: {run}\n\n"
        )
    );
    assert_eq!(
        sh(dir.path(), &format!("git show tether/{run}:out.txt")),
        "done\n"
    );
    assert!(!dir.path().join("out.txt").exists());
}
