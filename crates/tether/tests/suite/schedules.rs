//! `tether schedule` end to end, with a shell script as the agent and intervals of a second or
//! two: a Ralph schedule fires and its runs end done; one that keeps failing pauses itself after
//! three failures with a notice on a webhook naming `tether schedule resume`; a schedule left
//! without a scheduler past its grace gets one overdue notice and one catch-up run; pausing,
//! resuming and removing from the command line; the scheduler's unit; bad arguments named; an
//! agent refused every act but listing and pausing.

use std::fs;
use std::path::Path;
use std::process::{Child, Output};

use serde_json::Value;
use tether_testkit::wait_until;

use crate::common::webhook::Webhook;
use crate::common::{PATIENCE, cmd, run, spawn, text, wait_exit};

/// The agent: writes the time it started to `fires.log`, then keeps its promise unless a file
/// `fail` exists.
const AGENT: &str = r#"
date +%s%3N >> fires.log
if [ -f fail ]; then echo "not yet"; else echo "all done <promise>DONE</promise>"; fi
"#;

/// A workspace with the agent, `[schedule]` looking every second, and `extra` settings.
fn workspace(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sh agent.sh\"]\n\
             [schedule]\npoll_secs = 1\n{extra}"
        ),
    )
    .unwrap();
    dir
}

/// `tether <args>` in `dir`, which must succeed: its stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// The schedules as `tether schedule list --json` shows them.
fn listed(dir: &Path) -> Vec<Value> {
    serde_json::from_str(&ok(dir, &["schedule", "list", "--json"])).unwrap()
}

/// The schedule `name`, once `ready` holds of it (waiting with a deadline).
fn wait_for(dir: &Path, name: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    wait_until(what, PATIENCE, || {
        listed(dir)
            .into_iter()
            .find(|s| s["name"] == name && ready(s))
    })
    .unwrap()
}

/// The times the agent started, in ms.
fn fires(dir: &Path) -> Vec<i64> {
    fs::read_to_string(dir.join("fires.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn ralph(dir: &Path, name: &str, every: &str, extra: &[&str]) {
    let mut args = vec![
        "schedule",
        "add",
        "--name",
        name,
        "--every",
        every,
        "--ralph",
        "tidy up",
        "--completion-promise",
        "DONE",
    ];
    args.extend_from_slice(extra);
    ok(dir, &args);
}

/// Stops the scheduler as systemd does (SIGTERM) and waits for it: its output.
fn stop(mut scheduler: Child) -> Output {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(scheduler.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    wait_exit(&mut scheduler);
    scheduler.wait_with_output().unwrap()
}

/// The notices of `kind` the webhook received.
fn notices(hook: &Webhook, kind: &str) -> Vec<Value> {
    hook.bodies()
        .into_iter()
        .filter(|b| b["notice"] == kind)
        .collect()
}

#[test]
fn a_ralph_schedule_fires_and_its_runs_end_done() {
    let dir = workspace("");
    ralph(dir.path(), "tidy", "1s", &[]);
    let before = listed(dir.path());
    assert_eq!(before[0]["last_outcome"], Value::Null);
    assert_eq!(before[0]["timing"], "every 1s");
    let scheduler = spawn(dir.path(), &["schedule", "run"]);
    let done = wait_for(dir.path(), "tidy", "a fire ended done", |s| {
        s["last_outcome"]
            .as_str()
            .is_some_and(|o| o.ends_with(" done"))
    });
    let out = stop(scheduler);
    assert_eq!(done["consecutive_failures"], 0);
    assert_eq!(done["paused"], false);
    assert!(done["next_fire_ms"].as_i64().unwrap() > done["last_fire_ms"].as_i64().unwrap());
    // A normal run: its report beside its transcripts.
    let run = done["last_run"].as_str().unwrap();
    assert!(
        dir.path()
            .join(format!(".tether/runs/{run}/report.md"))
            .is_file(),
        "{}",
        text(&out.stderr)
    );
    // Once per interval at most, however often it looked.
    for pair in fires(dir.path()).windows(2) {
        assert!(pair[1] - pair[0] >= 900, "{:?}", fires(dir.path()));
    }
}

#[test]
fn three_failures_in_a_row_pause_the_schedule_with_a_notice_naming_the_resume() {
    let hook = Webhook::start();
    let dir = workspace(&hook.toml());
    fs::write(dir.path().join("fail"), "").unwrap();
    ralph(dir.path(), "flaky", "1s", &["--max-iterations", "1"]);
    let scheduler = spawn(dir.path(), &["schedule", "run"]);
    let paused = wait_for(dir.path(), "flaky", "the schedule paused", |s| {
        s["paused"] == true
    });
    assert_eq!(paused["consecutive_failures"], 3);
    let last = paused["last_outcome"].as_str().unwrap();
    assert!(last.contains("spent its budget"), "{last}");
    let notice = wait_until("the schedule_paused notice", PATIENCE, || {
        notices(&hook, "schedule_paused").into_iter().next()
    })
    .unwrap();
    assert_eq!(notice["resume"], "tether schedule resume flaky");
    let said = notice["text"].as_str().unwrap();
    assert!(
        said.contains("Schedule flaky paused itself after 3 failed runs"),
        "{said}"
    );
    assert_eq!(fires(dir.path()).len(), 3, "paused, it fired no more");

    // Resumed and fixed, it fires again and its failures are forgotten.
    fs::remove_file(dir.path().join("fail")).unwrap();
    let said = ok(dir.path(), &["schedule", "resume", "flaky"]);
    assert_eq!(said, "resumed schedule flaky\n");
    let done = wait_for(dir.path(), "flaky", "a fire after the resume", |s| {
        s["last_outcome"]
            .as_str()
            .is_some_and(|o| o.ends_with(" done"))
    });
    stop(scheduler);
    assert_eq!(done["consecutive_failures"], 0);
    assert_eq!(notices(&hook, "schedule_paused").len(), 1, "told once");
}

#[test]
fn fires_missed_without_a_scheduler_give_one_overdue_notice_and_one_catch_up() {
    let hook = Webhook::start();
    let dir = workspace(&format!("overdue_grace_secs = 1\n{}", hook.toml()));
    ralph(dir.path(), "nightly", "2s", &[]);
    // No scheduler runs: once three of its times have passed, the list says it is overdue.
    let late = wait_for(dir.path(), "nightly", "three missed times", |s| {
        s["overdue"] == true && s["next_fire_ms"].as_i64().unwrap() + 4_000 < tether_store::now_ms()
    });
    assert_eq!(late["last_fire_ms"], Value::Null);
    let scheduler = spawn(dir.path(), &["schedule", "run"]);
    wait_for(dir.path(), "nightly", "the catch-up fire ended", |s| {
        s["last_outcome"]
            .as_str()
            .is_some_and(|o| o.ends_with(" done"))
    });
    ok(dir.path(), &["schedule", "pause", "nightly"]);
    let overdue = wait_until("the overdue notice", PATIENCE, || {
        notices(&hook, "overdue").into_iter().next()
    })
    .unwrap();
    let said = overdue["text"].as_str().unwrap();
    assert!(
        said.starts_with("Schedule nightly is overdue: it was due at"),
        "{said}"
    );
    // One catch-up for the missed times: any next fire is a whole interval later.
    let fired = fires(dir.path());
    for pair in fired.windows(2) {
        assert!(pair[1] - pair[0] >= 1_900, "{fired:?}");
    }
    stop(scheduler);
    assert_eq!(
        notices(&hook, "overdue").len(),
        1,
        "one notice per overdue spell"
    );
}

#[test]
fn a_schedule_whose_last_run_still_works_is_overdue_once_and_not_fired_over_it() {
    let hook = Webhook::start();
    let dir = workspace(&format!("overdue_grace_secs = 1\n{}", hook.toml()));
    // The first run waits for `go`; the schedule falls due meanwhile.
    fs::write(
        dir.path().join("agent.sh"),
        format!("while [ ! -f go ]; do sleep 0.05; done\n{AGENT}"),
    )
    .unwrap();
    ralph(dir.path(), "slow", "1s", &[]);
    let scheduler = spawn(dir.path(), &["schedule", "run"]);
    let overdue = wait_until("the overdue notice", PATIENCE, || {
        notices(&hook, "overdue").into_iter().next()
    })
    .unwrap();
    assert!(
        overdue["text"]
            .as_str()
            .unwrap()
            .starts_with("Schedule slow is overdue"),
        "{overdue}"
    );
    let firing = listed(dir.path());
    assert_eq!(
        (&firing[0]["firing"], &firing[0]["overdue"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
    // Paused, it fires no more (and is overdue no more), while the run going on ends.
    ok(dir.path(), &["schedule", "pause", "slow"]);
    assert_eq!(listed(dir.path())[0]["overdue"], false);
    fs::write(dir.path().join("go"), "").unwrap();
    wait_for(dir.path(), "slow", "the slow run ended done", |s| {
        s["last_outcome"]
            .as_str()
            .is_some_and(|o| o.ends_with(" done"))
    });
    let out = stop(scheduler);
    assert_eq!(
        notices(&hook, "overdue").len(),
        1,
        "one notice per spell: {}",
        text(&out.stderr)
    );
    assert_eq!(
        fires(dir.path()).len(),
        1,
        "not fired over the run going on"
    );
}

#[test]
fn schedules_are_paused_resumed_and_removed_from_the_command_line() {
    let dir = workspace("");
    ralph(dir.path(), "tidy", "1h", &[]);
    ok(
        dir.path(),
        &[
            "schedule",
            "add",
            "--name",
            "weekdays",
            "--cron",
            "0 9 * * 1-5",
            "--ralph",
            "check",
            "--completion-promise",
            "OK",
        ],
    );
    let said = ok(dir.path(), &["schedule", "pause", "tidy"]);
    assert_eq!(
        said,
        "paused schedule tidy; resume it with: tether schedule resume tidy\n"
    );
    let all = listed(dir.path());
    let names: Vec<&str> = all.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tidy", "weekdays"]);
    assert_eq!(
        (&all[0]["paused"], &all[0]["next_fire_ms"]),
        (&Value::Bool(true), &Value::Null)
    );
    assert_eq!(all[1]["timing"], "cron 0 9 * * 1-5 (UTC)");
    assert!(all[1]["next_fire"].as_str().unwrap().ends_with(":00 UTC"));
    let text_list = ok(dir.path(), &["schedule", "list"]);
    assert!(
        text_list.starts_with("tidy  every 1h  paused  next: -"),
        "{text_list}"
    );

    ok(dir.path(), &["schedule", "resume", "tidy"]);
    assert_eq!(listed(dir.path())[0]["paused"], false);
    assert_eq!(
        ok(dir.path(), &["schedule", "remove", "tidy"]),
        "removed schedule tidy\n"
    );
    assert_eq!(listed(dir.path()).len(), 1);
    let again = run(dir.path(), &["schedule", "remove", "tidy"]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        text(&again.stderr),
        "error: no schedule named tidy here (`tether schedule list` lists them)\n"
    );
}

#[test]
fn bad_arguments_are_refused_naming_the_flag() {
    let dir = workspace("");
    ralph(dir.path(), "tidy", "1h", &[]);
    let refused = |args: &[&str]| {
        let out = run(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        text(&out.stderr)
    };
    let add = |rest: &[&str]| {
        let mut args = vec!["schedule", "add"];
        args.extend_from_slice(rest);
        refused(&args)
    };
    let ralph = ["--ralph", "x", "--completion-promise", "D"];
    let said = add(&[&["--name", "tidy", "--every", "1h"][..], &ralph].concat());
    assert!(
        said.starts_with("error: --name tidy: a schedule named tidy exists already"),
        "{said}"
    );
    let said = add(&[&["--name", "a", "--every", "soon"][..], &ralph].concat());
    assert!(
        said.starts_with("error: --every: `soon` is not a duration"),
        "{said}"
    );
    let said = add(&[&["--name", "a", "--cron", "61 * * * *"][..], &ralph].concat());
    assert!(
        said.starts_with("error: --cron: `61 * * * *` is not a cron expression"),
        "{said}"
    );
    let said = add(&["--name", "a", "--every", "1h", "--goal", "nope"]);
    assert!(
        said.starts_with("error: --goal nope: the plan plan.md has no goal nope"),
        "{said}"
    );
    let said = add(&[&["--name", "a b", "--every", "1h"][..], &ralph].concat());
    assert!(
        said.starts_with("error: --name \"a b\": a schedule's name is"),
        "{said}"
    );
    let said = add(&["--name", "a", "--every", "1h", "--ralph", "x"]);
    assert!(said.contains("--completion-promise"), "{said}");
    for empty in ["", "  ", "\n\t"] {
        let said = add(&[
            "--name",
            "a",
            "--every",
            "1h",
            "--ralph",
            empty,
            "--completion-promise",
            "D",
        ]);
        assert!(
            said.starts_with("error: --ralph: the prompt is empty"),
            "{empty:?}: {said}"
        );
    }
    assert_eq!(listed(dir.path()).len(), 1, "nothing added");
}

#[test]
fn install_prints_a_unit_that_keeps_the_scheduler_running() {
    let dir = workspace("");
    let root = fs::canonicalize(dir.path()).unwrap();
    let unit = ok(dir.path(), &["schedule", "install"]);
    assert!(
        unit.contains(&format!("WorkingDirectory={}\n", root.display())),
        "{unit}"
    );
    assert!(
        unit.contains(" schedule run\nRestart=on-failure\n"),
        "{unit}"
    );
    assert!(unit.contains("WantedBy=default.target"), "{unit}");
    assert!(unit.contains("\nSuccessExitStatus=130\n"), "{unit}");
    let cron = ok(dir.path(), &["schedule", "install", "--crontab"]);
    let line = cron.lines().last().unwrap();
    assert!(
        line.starts_with(&format!("@reboot cd {} && ", root.display())),
        "{cron}"
    );
    assert!(line.contains(" schedule run >> "), "{cron}");
    assert!(
        cron.starts_with("# cron starts it with a bare PATH"),
        "{cron}"
    );
}

#[test]
fn an_agent_may_list_and_pause_schedules_but_not_add_remove_resume_run_or_install_them() {
    let dir = workspace("");
    ralph(dir.path(), "tidy", "1h", &[]);
    ok(dir.path(), &["schedule", "pause", "tidy"]);
    let as_agent = |args: &[&str]| {
        cmd(dir.path(), args)
            .env("TETHER_AGENT", "1")
            .output()
            .unwrap()
    };
    for args in [
        &[
            "schedule",
            "add",
            "--name",
            "again",
            "--every",
            "1m",
            "--ralph",
            "hi",
            "--completion-promise",
            "D",
        ][..],
        &["schedule", "remove", "tidy"],
        &["schedule", "resume", "tidy"],
        &["schedule", "run"],
        &["schedule", "install"],
        &["schedule", "install", "--crontab"],
    ] {
        let out = as_agent(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let said = text(&out.stderr);
        assert!(said.starts_with("error: refused: "), "{args:?}: {said}");
        assert!(said.contains("is for a person"), "{args:?}: {said}");
        assert!(said.contains("TETHER_AGENT is set"), "{args:?}: {said}");
        assert!(said.contains("in their own shell"), "{args:?}: {said}");
        assert_eq!(text(&out.stdout), "", "{args:?}: nothing printed");
    }
    let all = listed(dir.path());
    assert_eq!(all.len(), 1, "nothing added, nothing removed");
    assert_eq!(all[0]["paused"], true, "not resumed");

    // What an agent may do: read the schedules, and pause one, as `tether pause` a run.
    let out = as_agent(&["schedule", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("tidy  every 1h  paused"));
    let out = as_agent(&["schedule", "pause", "tidy"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // A person may do the rest.
    ok(dir.path(), &["schedule", "resume", "tidy"]);
    ralph(dir.path(), "again", "1m", &[]);
    ok(dir.path(), &["schedule", "remove", "again"]);
    assert!(ok(dir.path(), &["schedule", "install"]).contains(" schedule run"));
    assert_eq!(listed(dir.path())[0]["paused"], false);
}

#[test]
fn a_timing_that_would_never_fire_is_refused_naming_the_flag() {
    let dir = workspace("");
    let ralph = ["--ralph", "x", "--completion-promise", "D"];
    let add = |name: &str, timing: &[&str]| {
        let args = [&["schedule", "add", "--name", name][..], timing, &ralph].concat();
        run(dir.path(), &args)
    };
    for (timing, said) in [
        (
            ["--cron", "0 0 30 2 *"],
            "error: --cron: `0 0 30 2 *` names no time to come",
        ),
        (
            ["--cron", "0 0 0 1 1 * 2020"],
            "error: --cron: `0 0 0 1 1 * 2020` names no time to come",
        ),
        (
            ["--every", "300000000000d"],
            "error: --every: `300000000000d` is longer than the longest interval, 366d",
        ),
        (
            ["--every", "367d"],
            "error: --every: `367d` is longer than the longest interval, 366d",
        ),
    ] {
        let out = add("never", &timing);
        assert_eq!(out.status.code(), Some(2), "{timing:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with(said), "{timing:?}: {stderr}");
    }
    assert!(listed(dir.path()).is_empty(), "nothing added");

    // Honest timings, however rare, are kept, each with its next time.
    for (name, timing) in [
        ("weekdays", ["--cron", "0 9 * * 1-5"]),
        ("leap", ["--cron", "0 0 29 2 *"]),
        ("daily", ["--every", "1d"]),
        ("yearly", ["--every", "366d"]),
    ] {
        let out = add(name, &timing);
        assert!(out.status.success(), "{timing:?}: {}", text(&out.stderr));
    }
    for s in listed(dir.path()) {
        assert!(s["next_fire_ms"].as_i64().is_some(), "{s}");
    }
}
