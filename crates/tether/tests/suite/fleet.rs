//! `tether run --parallel N`: many goals of the plan at once, each in a worktree of its own on a
//! branch cut from the run's `tether/<run-id>`, merged back as each signs off, a goal starting
//! only once the goals in its `after:` are merged; the checkout is never written.

use std::path::Path;
use std::process::Stdio;

use tether_config::Api;
use tether_testkit::model_server::FakeModelServer;

use tether_model::scripted::Script;

use crate::common::fleet::{FileOf, agent, judge, own, plan_of, settling_agent, shared};
use crate::common::{cmd, model_table, pending_question, run, runtime, sh, text, wait_output};

/// A diamond (`base` → `left`, `right` → `top`) and a goal of its own (`alone`). Each goal's
/// work is a file `<id>.txt`; `top`'s verify also needs `left.txt` and `right.txt`, which its
/// branch holds only if it was cut after both were merged.
fn diamond() -> String {
    plan_of(
        "shapes",
        &[
            ("base", &[], "test -f base.txt"),
            ("left", &["base"], "test -f base.txt && test -f left.txt"),
            ("right", &["base"], "test -f base.txt && test -f right.txt"),
            (
                "top",
                &["left", "right"],
                "test -f left.txt && test -f right.txt && test -f top.txt",
            ),
            ("alone", &[], "test -f alone.txt"),
        ],
    )
}

fn repository(dir: &Path) {
    sh(
        dir,
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && printf '.tether/\\n*.count\\n' > .gitignore && printf 'mode=fast\\n' > config.txt \
         && git add -A && git commit -q -m start",
    );
}

/// A repository with `plan` committed, whose goals the fake agent and judge work (each goal on
/// its own file, or with `shared` all on one); `tether run --parallel 2` there, to its end.
struct Fleet {
    dir: tempfile::TempDir,
    out: std::process::Output,
    _servers: Servers,
}

/// The fake agent (when the agent is a model's) and judge of a run, and the state directory
/// its worktrees are in: kept until the test ends.
#[allow(dead_code)]
pub(crate) struct Servers(
    Option<FakeModelServer>,
    FakeModelServer,
    tokio::runtime::Runtime,
    pub(crate) tempfile::TempDir,
);

/// Who works the goals: the built-in agent on a scripted model, or a shell script (the
/// `command` executor, run as `sh agent.sh` in the goal's worktree).
pub(crate) enum Worker {
    Model(Script),
    Command(&'static str),
}

fn run_fleet(plan: &str, file_of: FileOf) -> Fleet {
    start_fleet(plan, agent(file_of), file_of, "").finish()
}

/// A run of many goals started, not waited for.
struct Running {
    dir: tempfile::TempDir,
    child: std::process::Child,
    servers: Servers,
}

impl Running {
    /// Answers the question the run asks with `answer`, as a person would, then waits for its
    /// end.
    fn answered(self, answer: &str) -> Fleet {
        let root = self.dir.path().to_owned();
        let q = pending_question(&root);
        let answered = run(&root, &["answer", q["id"].as_str().unwrap(), answer]);
        assert_eq!(
            answered.status.code(),
            Some(0),
            "{}",
            text(&answered.stderr)
        );
        self.finish()
    }

    fn finish(self) -> Fleet {
        Fleet {
            out: wait_output(self.child),
            dir: self.dir,
            _servers: self.servers,
        }
    }
}

/// `tether run --parallel 2` started over `plan`, its goals worked by `agent` and judged on
/// the files `file_of` names, with `toml` added to the configuration.
fn start_fleet(plan: &str, agent: Script, file_of: FileOf, toml: &str) -> Running {
    start_fleet_of(plan, Worker::Model(agent), file_of, toml)
}

/// [`start_fleet`] with the goals worked by `worker`.
fn start_fleet_of(plan: &str, worker: Worker, file_of: FileOf, toml: &str) -> Running {
    let (dir, servers) = prepare_fleet(plan, worker, file_of, toml);
    let child = spawn_fleet(dir.path(), &servers, &[]);
    Running {
        dir,
        child,
        servers,
    }
}

/// `tether run --parallel 2 --approve` started in `root` with `env` added, its worktrees in
/// `servers`' state directory.
pub(crate) fn spawn_fleet(
    root: &Path,
    servers: &Servers,
    env: &[(&str, &str)],
) -> std::process::Child {
    let mut command = cmd(root, &["run", "--parallel", "2", "--approve"]);
    command.env("XDG_STATE_HOME", servers.3.path());
    for (name, value) in env {
        command.env(name, value);
    }
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A repository with `plan` committed and a configuration whose goals `worker` works and a
/// fake judge judges on the files `file_of` names (`toml` added), nothing started yet.
pub(crate) fn prepare_fleet(
    plan: &str,
    worker: Worker,
    file_of: FileOf,
    toml: &str,
) -> (tempfile::TempDir, Servers) {
    let rt = runtime();
    let judge = rt.block_on(FakeModelServer::start(judge(file_of))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (agent, executor) = match worker {
        Worker::Model(script) => {
            let agent = rt.block_on(FakeModelServer::start(script)).unwrap();
            let table = model_table("model", Api::OpenAiChat, &agent, "worker-model");
            (Some(agent), table)
        }
        Worker::Command(script) => {
            std::fs::write(root.join("agent.sh"), script).unwrap();
            let table = "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n";
            (None, table.to_owned())
        }
    };
    std::fs::write(
        root.join("tether.toml"),
        format!(
            "{executor}\n{}\n{toml}",
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    std::fs::write(root.join("plan.md"), plan).unwrap();
    repository(root);
    let state = tempfile::tempdir().unwrap();
    (dir, Servers(agent, judge, rt, state))
}

#[test]
fn a_diamond_of_goals_runs_two_at_once_and_merges_into_the_runs_branch() {
    let fleet = run_fleet(&diamond(), own);
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
    // The store holds the run of many goals: every goal merged, each by a goal run of its own.
    let store = tether_store::Store::open(root.join(".tether/tether.db")).unwrap();
    let fleet = store.fleets(1).unwrap().remove(0);
    assert_eq!(fleet.branch, branch);
    assert_eq!(fleet.outcome.as_deref(), Some("all_merged"));
    let goals: Vec<(&str, tether_store::GoalState, bool)> = fleet
        .goals
        .iter()
        .map(|g| (g.goal_id.as_str(), g.state, g.run_id.is_some()))
        .collect();
    let merged = tether_store::GoalState::Merged;
    assert_eq!(
        goals,
        [
            ("base", merged, true),
            ("left", merged, true),
            ("right", merged, true),
            ("top", merged, true),
            ("alone", merged, true)
        ]
    );
    assert_eq!(fleet.goals[3].after, ["left", "right"]);
    // Its plan has every goal signed off: a goal's branch starts from the plan as merged so far.
    let plan = sh(root, &format!("git show {branch}:plan.md"));
    assert_eq!(plan.matches("status: done").count(), 5, "{plan}");
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

/// Two goals that change the same lines, and one waiting on the second whose verify is `later`.
fn clash_with(later: &str) -> String {
    plan_of(
        "clash",
        &[
            ("first", &[], "grep -q first shared.txt"),
            ("second", &[], "grep -q second shared.txt"),
            ("later", &["second"], later),
        ],
    )
}

/// The branch of the run in what `tether run --parallel` printed on stderr.
fn branch_of(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("branch "))
        .and_then(|l| l.split(':').next())
        .unwrap()
        .to_owned()
}

/// `first` and `second` write `shared.txt`; `later` (after `second`) its own file.
pub(crate) fn clashing(goal: &str) -> String {
    if goal == "later" {
        own(goal)
    } else {
        shared(goal)
    }
}

/// [`clash_with`] `later` on a file of its own.
pub(crate) fn clash_then_later() -> String {
    clash_with("test -f later.txt")
}

#[test]
fn a_conflicting_merge_is_settled_by_the_goals_agent_then_merged_with_both_goals_work() {
    let settled = "done first, kept\ndone second, kept\n";
    let agent = settling_agent(clashing, Some(settled));
    let fleet = start_fleet(&clash_then_later(), agent, clashing, "").finish();
    let (root, out) = (fleet.dir.path(), &fleet.out);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("all goals merged into "), "{stdout}");
    let branch = branch_of(&stderr);
    // The second to sign off conflicted, and its agent settled it.
    let other = if stderr.contains("goal first conflicts") {
        "first"
    } else {
        "second"
    };
    assert!(
        stderr.contains(&format!(
            "goal {other} conflicts with the run's branch in plan.md, shared.txt: its agent \
             settles it"
        )),
        "{stderr}"
    );
    // Both goals' work is on the run's branch, and `later`'s after them.
    assert_eq!(sh(root, &format!("git show {branch}:shared.txt")), settled);
    assert_eq!(
        sh(root, &format!("git show {branch}:later.txt")),
        "done later\n"
    );
    // The settled goal's branch holds the run's branch merged in: a commit of two parents.
    let goal_branch = format!("{branch}-{other}");
    let parents = sh(root, &format!("git rev-list --parents -n1 {goal_branch}"));
    assert_eq!(parents.split_whitespace().count(), 3, "{parents}");
    // Its plan was settled from both sides: every goal is done on the run's branch.
    let plan = sh(root, &format!("git show {branch}:plan.md"));
    assert_eq!(plan.matches("status: done").count(), 3, "{plan}");
    assert!(!plan.contains("<<<<<<<"), "{plan}");
    assert_eq!(sh(root, "git status --porcelain"), "");
}

#[test]
fn at_the_last_merge_attempt_a_person_is_asked_and_their_retry_merges_what_they_settled() {
    let running = start_fleet(
        &clash_then_later(),
        agent(clashing),
        clashing,
        "[run]\nmerge_attempts = 1\n",
    );
    let root = running.dir.path().to_owned();
    let q = pending_question(&root);
    let question = q["question"].as_str().unwrap().to_owned();
    let other = if question.starts_with("Goal `first`") {
        "first"
    } else {
        "second"
    };
    assert!(
        question.contains("conflicted 1 time(s), in: plan.md, shared.txt")
            && question.contains("answer `retry` to merge it again"),
        "{question}"
    );
    assert_eq!(q["options"], serde_json::json!(["retry", "leave"]));
    // The person settles it by hand in the goal's worktree, then says retry.
    let dir = question
        .split("(its worktree: ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap()
        .to_owned();
    let integration = question
        .split("merge into `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap()
        .to_owned();
    let tree = Path::new(&dir);
    sh(
        tree,
        &format!(
            "git -c user.name=Ana -c user.email=ana@example.com merge -q {integration} || true; \
             printf 'done first\\ndone second\\n' > shared.txt; \
             git checkout -q --theirs plan.md; git add -A; \
             git -c user.name=Ana -c user.email=ana@example.com commit -q -m settled"
        ),
    );
    let fleet = running.answered("retry");
    let out = &fleet.out;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "goal {other} conflicts with the run's branch in plan.md, shared.txt: a person is \
             asked"
        )),
        "{stderr}"
    );
    let branch = branch_of(&stderr);
    assert_eq!(
        sh(&root, &format!("git show {branch}:shared.txt")),
        "done first\ndone second\n"
    );
    assert_eq!(
        sh(&root, &format!("git show {branch}:later.txt")),
        "done later\n"
    );
}

#[test]
fn a_person_who_leaves_the_conflict_ends_the_run_with_what_waits_on_it_never_started() {
    let running = start_fleet(
        &clash_then_later(),
        agent(clashing),
        clashing,
        "[run]\nmerge_attempts = 1\n",
    );
    let root = running.dir.path().to_owned();
    let fleet = running.answered("leave");
    let out = &fleet.out;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    // Whichever signed off first is merged; the other conflicts in shared.txt.
    let other = if stderr.contains("goal first conflicts") {
        "first"
    } else {
        "second"
    };
    let merged = if other == "first" { "second" } else { "first" };
    // (the plan too: each branch signed its own goal off in it)
    assert!(
        stdout.contains(&format!(
            "{other} conflicts in plan.md, shared.txt (merge tether/r-"
        )),
        "{stdout}"
    );
    let branch = branch_of(&stderr);
    // The run's branch holds the merged goal's work alone, and no merge in progress.
    assert_eq!(
        sh(&root, &format!("git show {branch}:shared.txt")),
        format!("done {merged}\n")
    );
    if merged == "first" {
        // `later` waits on `second`, which was not merged: it never started.
        assert!(stdout.contains("waiting on them: later"), "{stdout}");
        assert!(!stderr.contains("committed goal later"), "{stderr}");
    } else {
        // `second` merged: `later` went on while the person was asked.
        assert!(stdout.contains("merged: second, later"), "{stdout}");
    }
    assert_eq!(sh(&root, "git status --porcelain"), "");
}

/// `change` rewrites the configuration `keep`'s verify reads; `later` waits on `change`.
fn regress() -> String {
    plan_of(
        "regress",
        &[
            (
                "keep",
                &[],
                "test -f keep.txt && grep -q mode=fast config.txt",
            ),
            ("change", &["keep"], "grep -q change config.txt"),
            ("later", &["change"], "test -f later.txt"),
        ],
    )
}

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
    let fleet = run_fleet(&regress(), regressing);
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
    std::fs::write(root.join("plan.md"), diamond()).unwrap();
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

/// `slow` and `quick` start together; `next` waits on `quick`.
const LIMITED: &str = "# Plan: limited

## Goal: Slow
<!-- id: slow -->
status: active
done_when: slow.txt says done slow (TARGET-slow)
verify: test -f slow.txt

## Goal: Quick
<!-- id: quick -->
status: active
done_when: quick.txt says done quick (TARGET-quick)
verify: test -f quick.txt

## Goal: Next
<!-- id: next -->
status: active
after: quick
done_when: next.txt says done next (TARGET-next)
verify: test -f next.txt

## Log
";

/// Each goal's agent writes `<goal>.txt` and signs it off; `slow`'s first turn hits its
/// provider's limit, which resets in 15 seconds (time enough, on a loaded machine, for `quick`
/// to be merged and `next` to start).
const LIMITED_AGENT: &str = concat!(
    r#"g="$TETHER_GOAL"
n=$(cat "$g.count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$g.count"
if [ "$g" = slow ] && [ $n -eq 1 ]; then
  echo "Rate limit reached; try again in 15 seconds" >&2; exit 1
fi
echo "done $g" > "$g.txt"
'"#,
    env!("CARGO_BIN_EXE_tether"),
    r#"' goal complete "$g" --evidence "$g.txt says done $g" --path "$g.txt" >/dev/null
echo "$g is done"
"#
);

#[test]
fn when_one_agent_hits_its_providers_limit_the_next_goals_agent_waits_for_the_same_reset() {
    let fleet = start_fleet_of(LIMITED, Worker::Command(LIMITED_AGENT), own, "").finish();
    let (root, out) = (fleet.dir.path(), &fleet.out);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let store = tether_store::Store::open(root.join(".tether/tether.db")).unwrap();
    let events = store
        .events_all_after(tether_store::Seq(0), 10_000)
        .unwrap();
    let waits: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event {
            Some(tether_store::Event::WaitingForUsageLimit { message, .. }) => {
                Some((e.run_id.clone().unwrap(), e.seq, message.clone()))
            }
            _ => None,
        })
        .collect();
    // `slow` met the limit itself; `next`, started while it lasted, waited for the same reset
    // before its agent's first turn (no request of its own into the limit).
    assert_eq!(waits.len(), 2, "{waits:?}");
    assert_eq!(waits[0].2, "Rate limit reached; try again in 15 seconds");
    let (run, seq, message) = &waits[1];
    assert_eq!(
        message,
        "Rate limit reached; try again in 15 seconds (another run's agent of the same provider \
         hit it)"
    );
    assert_ne!(run, &waits[0].0);
    let before: Vec<&str> = events
        .iter()
        .filter(|e| e.run_id.as_ref() == Some(run) && e.seq < *seq)
        .map(|e| e.kind.as_str())
        .collect();
    assert!(!before.contains(&"iteration_started"), "{before:?}");
}

/// Three goals of their own, each done in one iteration.
pub(crate) fn three() -> String {
    plan_of(
        "three",
        &[
            ("one", &[], "test -f one.txt"),
            ("two", &[], "test -f two.txt"),
            ("three", &[], "test -f three.txt"),
        ],
    )
}

#[test]
fn the_runs_budget_is_shared_by_its_goals_and_no_goal_starts_once_they_have_spent_it() {
    // Two iterations for the whole run: each goal alone would have two.
    let toml = "[loop]\nmax_iterations = 2\n";
    let fleet = start_fleet(&three(), agent(own), own, toml).finish();
    let (root, out) = (fleet.dir.path(), &fleet.out);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("stopped with goals not merged: three")
            && stdout.contains("; the goals' shared iteration budget spent: 2 iterations of 2"),
        "{stdout}"
    );
    assert!(stdout.contains("merged: one, two"), "{stdout}");
    // `three` never started: no run of its own, nothing of it on the run's branch.
    assert_eq!(stderr.matches("goal run r-").count(), 2, "{stderr}");
    let branch = stderr
        .lines()
        .find_map(|l| l.strip_prefix("branch "))
        .and_then(|l| l.split(':').next())
        .unwrap();
    assert!(sh(root, &format!("git ls-tree --name-only {branch}")).contains("two.txt"));
}

#[test]
fn the_dashboard_starts_a_run_of_many_goals_and_shows_it_to_its_end() {
    let (dir, servers) = prepare_fleet(&three(), Worker::Model(agent(own)), own, "");
    let root = dir.path();
    // Its contracts approved by a person at a terminal.
    let approved = run(root, &["plan", "approve", "--all"]);
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        text(&approved.stderr)
    );
    let mut serve = cmd(root, &["serve"]);
    serve.env("XDG_STATE_HOME", servers.3.path());
    let served = super::serve_runs::spawn(serve);
    let (status, started) = served.post(
        "/api/runs",
        &serde_json::json!({"kind": "goal", "parallel": 2}),
    );
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    assert_eq!(started["url"], format!("/fleets/{id}"));
    let done = tether_testkit::wait_until(
        "the run of many goals to end",
        crate::common::PATIENCE,
        || {
            let (_, fleet) = served.request("GET", &format!("/api/fleets/{id}"), None);
            fleet["outcome"].as_str().is_some().then_some(fleet)
        },
    )
    .unwrap();
    assert_eq!(done["outcome"], "all_merged", "{done}");
    let states: Vec<&str> = done["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["merged", "merged", "merged"], "{done}");
    let branch = done["branch"].as_str().unwrap();
    assert_eq!(
        sh(root, &format!("git show {branch}:three.txt")),
        "done three\n"
    );
    // The checkout is as it was.
    assert!(!root.join("three.txt").exists());
}

/// `quick` and `slow` at once; `last` waits on `slow`.
fn slow() -> String {
    plan_of(
        "slow",
        &[
            ("quick", &[], "test -f quick.txt"),
            ("slow", &[], "test -f slow.txt"),
            ("last", &["slow"], "test -f last.txt"),
        ],
    )
}

/// [`agent`], whose first turn on `slow` is a long command (the run is interrupted in it).
pub(crate) fn slow_agent() -> Script {
    slow_agent_told().0
}

/// [`slow_agent`], and whether its long command was handed out yet.
pub(crate) fn slow_agent_told() -> (Script, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let told = std::sync::Arc::new(AtomicBool::new(false));
    let then = agent(own);
    let telling = told.clone();
    let script = Script::from_fn(move |req: &tether_model::Request| {
        let goal = crate::common::fleet::goal_of(req);
        if goal == "slow"
            && req.last_tool_result().is_none()
            && !telling.swap(true, Ordering::SeqCst)
        {
            return tether_model::scripted::Turn::tool(
                "bash",
                serde_json::json!({"command": "sleep 60"}),
            );
        }
        then.next_turn(req).unwrap()
    });
    (script, told)
}

#[test]
fn an_interrupted_run_of_many_goals_is_taken_up_again_resuming_the_goal_it_stopped() {
    let (dir, servers) = prepare_fleet(&slow(), Worker::Model(slow_agent()), own, "");
    let root = dir.path();
    let state = servers.3.path().to_owned();
    let at_terminal = |args: &str| {
        crate::common::pty::Pty::start_with(root, args, |c| {
            c.env("XDG_STATE_HOME", &state);
        })
    };
    // At a terminal, as a person runs it: `quick` merges while `slow` works; Ctrl+C.
    let mut first = at_terminal("run --parallel 2 --approve");
    first.wait_for("merged goal quick into tether/r-");
    first.ctrl_c();
    let (code, screen) = first.wait();
    assert_eq!(code, 4, "{screen}");
    assert!(
        screen.contains("stopped with goals not merged: slow"),
        "{screen}"
    );
    let store = tether_store::Store::open(root.join(".tether/tether.db")).unwrap();
    let before = store.fleets(1).unwrap().remove(0);
    assert_eq!(before.outcome.as_deref(), Some("interrupted"));
    let slow_run = before.goals[1].run_id.clone().unwrap();
    let status = store.run(&slow_run).unwrap().state.status;
    assert!(!tether_store::control::is_ended(status), "{status:?}");

    // Taken up again: `slow`'s own run is resumed where it stopped, then `last` starts.
    let again = at_terminal(&format!("resume {}", before.id));
    let (code, screen) = again.wait();
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains(&format!("all goals merged into {}", before.branch)),
        "{screen}"
    );
    let after = store.fleet(&before.id).unwrap();
    assert_eq!(after.outcome.as_deref(), Some("all_merged"));
    assert_eq!(
        after.goals[1].run_id.as_ref(),
        Some(&slow_run),
        "resumed, not started anew"
    );
    assert_eq!(
        after.goals[0].run_id, before.goals[0].run_id,
        "quick was not run again"
    );
    let resumed = store
        .events(&slow_run, tether_store::Seq(0), 10_000)
        .unwrap()
        .iter()
        .filter(|e| e.kind == "resumed")
        .count();
    assert_eq!(resumed, 1);
    for goal in ["quick", "slow", "last"] {
        assert_eq!(
            sh(root, &format!("git show {}:{goal}.txt", before.branch)),
            format!("done {goal}\n")
        );
    }
    // Nothing is left to take up.
    let done = run(root, &["resume", before.id.as_str()]);
    assert_eq!(done.status.code(), Some(2), "{}", text(&done.stderr));
    assert!(text(&done.stderr).contains("there is nothing to take up"));
}

#[test]
fn a_run_of_many_goals_killed_outright_is_taken_up_again_with_nothing_lost_or_done_twice() {
    let (agent, told) = slow_agent_told();
    let (dir, servers) = prepare_fleet(&slow(), Worker::Model(agent), own, "");
    let root = dir.path();
    let mut child = spawn_fleet(root, &servers, &[]);
    let store = tether_store::Store::open(root.join(".tether/tether.db")).unwrap();
    // Killed while `quick` is merged and `slow`'s agent is in its long command.
    let (fleet, slow_run) = tether_testkit::wait_until(
        "quick merged while slow works",
        crate::common::PATIENCE,
        || {
            let fleet = store.fleets(1).ok()?.into_iter().next()?;
            let merged = fleet.goals[0].state == tether_store::GoalState::Merged;
            let at_work = told.load(std::sync::atomic::Ordering::SeqCst);
            let slow_run = fleet.goals[1].run_id.clone()?;
            (merged && at_work).then_some((fleet, slow_run))
        },
    )
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(fleet.outcome, None, "it never ended");

    let again = cmd(root, &["resume", fleet.id.as_str()])
        .env("XDG_STATE_HOME", servers.3.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(again);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let after = store.fleet(&fleet.id).unwrap();
    assert_eq!(after.outcome.as_deref(), Some("all_merged"));
    assert_eq!(
        after.goals[0].run_id, fleet.goals[0].run_id,
        "quick ran once"
    );
    assert_eq!(
        after.goals[1].run_id.as_ref(),
        Some(&slow_run),
        "slow resumed"
    );
    for goal in ["quick", "slow", "last"] {
        assert_eq!(
            sh(root, &format!("git show {}:{goal}.txt", fleet.branch)),
            format!("done {goal}\n")
        );
    }
    // Each goal merged once, in order.
    let merges = sh(
        root,
        &format!("git log --merges --reverse --format=%s {}", fleet.branch),
    );
    assert_eq!(
        merges,
        "tether: merge goal quick\ntether: merge goal slow\ntether: merge goal last\n"
    );
}
