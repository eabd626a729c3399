//! The `tether` binary as a user runs it: output is snapshot-tested, exit codes asserted.

use std::fs;
use std::path::Path;

use crate::common::tether;

fn fixture(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tether-plan/tests/fixtures");
    fs::read_to_string(root.join(name)).unwrap()
}

#[test]
fn help_reads_well() {
    let dir = tempfile::tempdir().unwrap();
    let out = tether(dir.path(), &["--help"]);
    assert_eq!(out.code, 0);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn help_names_every_channel_of_today() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["mcp", "doctor"] {
        let out = tether(dir.path(), &[command, "--help"]);
        assert_eq!(out.code, 0);
        for channel in ["Zulip", "Slack", "Telegram", "ntfy"] {
            assert!(
                out.stdout.contains(channel),
                "tether {command} --help names {channel}: {}",
                out.stdout
            );
        }
    }
}

#[test]
fn init_then_validate_then_plan() {
    let dir = tempfile::tempdir().unwrap();
    let init = tether(dir.path(), &["init"]);
    assert_eq!((init.code, init.stderr.as_str()), (0, ""));
    insta::assert_snapshot!("init", init.stdout);

    let validate = tether(dir.path(), &["validate"]);
    assert_eq!((validate.code, validate.stderr.as_str()), (0, ""));
    insta::assert_snapshot!("validate_clean", validate.stdout);

    let plan = tether(dir.path(), &["plan"]);
    assert_eq!((plan.code, plan.stderr.as_str()), (0, ""));
    insta::assert_snapshot!("plan_after_init", plan.stdout);

    // From a subdirectory, the workspace is found upwards.
    let sub = dir.path().join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    assert_eq!(tether(&sub, &["plan"]).stdout, plan.stdout);
}

#[test]
fn init_refuses_to_overwrite_with_exit_2_and_never_replaces_a_plan() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), "mine\n").unwrap();
    // A plan of the person's own: kept, and the configuration written beside it.
    let out = tether(dir.path(), &["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("kept      plan.md"), "{}", out.stdout);
    let out = tether(dir.path(), &["init"]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    insta::assert_snapshot!(out.stderr, @"error: tether.toml already exists; nothing was written (use --force to overwrite)");
    let out = tether(dir.path(), &["init", "--agent", "codex", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("replaced  tether.toml"),
        "{}",
        out.stdout
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        "mine\n"
    );
}

#[test]
fn validate_lists_every_problem_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[loop]\nmax_iteratons = 5\n[human]\nthreshold = 7\n",
    )
    .unwrap();
    fs::write(dir.path().join("plan.md"), fixture("malformed.md")).unwrap();
    let out = tether(dir.path(), &["validate"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stdout);

    let json = tether(dir.path(), &["validate", "--json"]);
    assert_eq!(json.code, 2);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 14);
    assert_eq!(v["findings"][0]["key"], "loop.max_iteratons");
}

/// The dashboard's settings — `"web"` among the channels, `[server] listen` — are valid.
#[test]
fn validate_accepts_the_dashboard_settings() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[human]\nchannels = [\"terminal\", \"web\"]\n\n[server]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    fs::write(dir.path().join("plan.md"), fixture("product.md")).unwrap();
    let json = tether(dir.path(), &["validate", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let keys: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["key"].as_str())
        .collect();
    assert!(
        !keys.contains(&"human.channels") && !keys.contains(&"server.listen"),
        "{json:?}",
        json = json.stdout
    );
}

#[test]
fn plan_json_is_the_parsed_plan() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), fixture("product.md")).unwrap();
    let out = tether(dir.path(), &["plan", "--json"]);
    assert_eq!(out.code, 0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["file"], "plan.md");
    assert_eq!(v["plan"]["goals"][0]["id"]["value"], "cache-layer");
    insta::assert_json_snapshot!(v);
}

#[test]
fn plan_archive_moves_finished_goals_and_then_has_nothing_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "# Plan: p\n\n## Goal: Done one\n<!-- id: a -->\nstatus: done\n\n\
                ## Goal: Open one\n<!-- id: b -->\nstatus: open\n\n## Log\n- begun\n";
    fs::write(dir.path().join("plan.md"), plan).unwrap();
    let out = tether(dir.path(), &["plan", "archive"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "archived 1 goal(s) in plan.md:\n  Done one\n");
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        "# Plan: p\n\n## Goal: Open one\n<!-- id: b -->\nstatus: open\n\n## Log\n- begun\n\n\
         ## Archive\n\n## Goal: Done one\n<!-- id: a -->\nstatus: done\n\n"
    );
    let again = tether(dir.path(), &["plan", "archive", "--json"]);
    assert_eq!((again.code, again.stdout.as_str()), (0, "[]\n"));
    fs::write(dir.path().join("plan.md"), fixture("malformed.md")).unwrap();
    let refused = tether(dir.path(), &["plan", "archive"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
}

#[test]
fn plan_shows_flags_for_a_malformed_plan() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), fixture("malformed.md")).unwrap();
    let out = tether(dir.path(), &["plan"]);
    assert_eq!(out.code, 0);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn plan_without_a_plan_file_or_with_a_bad_config_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = tether(dir.path(), &["plan"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stderr, @"error: [WS]/plan.md does not exist; run `tether init` or set `plan` in tether.toml");

    fs::write(dir.path().join("tether.toml"), "plna = \"x.md\"\n").unwrap();
    let out = tether(dir.path(), &["plan"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stderr, @r"
    error: [WS]/tether.toml has 1 problem:
    [WS]/tether.toml:1: plna: unknown key; did you mean `plan`?
    ");
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = tether(dir.path(), &["plan", "--jsn"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--json"), "{}", out.stderr);
}

#[test]
fn demo_runs_the_loop_with_a_scripted_model_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("demo");
    let out = tether(dir.path(), &["demo", "--dir", "demo", "--yes"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(ws.join("greet.sh")).unwrap(),
        "echo \"Hello, $1!\"\n"
    );
    let runs: Vec<_> = fs::read_dir(ws.join(".tether/runs")).unwrap().collect();
    assert_eq!(runs.len(), 1);
    let run = runs[0].as_ref().unwrap().file_name().into_string().unwrap();
    let durations = regex_lite::Regex::new(r"\d+\.\d s\)").unwrap();
    let url = regex_lite::Regex::new(r"http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{64}").unwrap();
    let stdout = durations
        .replace_all(&out.stdout, "[T] s)")
        .replace(&run, "[RUN]");
    let stdout = url.replace_all(&stdout, "[DASHBOARD URL]");
    insta::assert_snapshot!(stdout);
}

#[test]
fn a_person_adds_a_criterion_and_the_changed_contract_is_approved_as_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "# Plan: p\n\n## Goal: Fast cache\n<!-- id: cache -->\nstatus: active\n\
                done_when: p95 < 50ms\nverify: true\n\n## Goal: No criteria yet\n<!-- id: bare -->\n\
                status: open\n\n## Log\n";
    fs::write(dir.path().join("plan.md"), plan).unwrap();
    let out = tether(
        dir.path(),
        &["goal", "add-criterion", "cache", "no stale reads"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("cache: done_when is now p95 < 50ms; no stale reads\n"),
        "{}",
        out.stdout
    );
    let out = tether(dir.path(), &["goal", "add-criterion", "bare", "it exists"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        "# Plan: p\n\n## Goal: Fast cache\n<!-- id: cache -->\nstatus: active\n\
         done_when: p95 < 50ms; no stale reads\nverify: true\n\n## Goal: No criteria yet\n\
         <!-- id: bare -->\nstatus: open\ndone_when: it exists\n\n## Log\n\
         - criterion added to cache by tester: no stale reads\n\
         - criterion added to bare by tester: it exists\n"
    );
    let store = tether_store::Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let approval = store.approval("plan.md", "cache").unwrap().unwrap();
    assert_eq!(approval.approved_by, "tester");
    let doc = tether_plan::PlanDoc::parse(
        "plan.md",
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
    );
    assert_eq!(
        approval.contract_hash,
        doc.plan().goal("cache").unwrap().contract_hash()
    );

    let refused = tether(dir.path(), &["goal", "add-criterion", "nope", "x"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    let empty = tether(dir.path(), &["goal", "add-criterion", "cache", "  "]);
    assert_eq!(empty.code, 2, "{}", empty.stderr);
    assert!(
        empty.stderr.contains("the criterion is empty"),
        "{}",
        empty.stderr
    );
}

#[test]
fn a_run_report_says_what_the_run_did_and_is_written_beside_its_transcripts() {
    use tether_store::{
        Author, Event, NewQuestion, NewVerdict, Outcome, RunKind, Store, StoreOptions, Verdict,
        VerdictKind,
    };
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        clock: || 1_795_000_000_000,
        ..StoreOptions::default()
    };
    let store = Store::open_with(dir.path().join(".tether/tether.db"), &options).unwrap();
    // A git workspace: the run's starting snapshot, then a changed file and a new one.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(
        dir.path().join("lib.rs"),
        "fn add() {}
",
    )
    .unwrap();
    git(&["add", "lib.rs"]);
    git(&["commit", "-qm", "start"]);
    let ws = tether_config::Workspace::at(dir.path());
    let began = crate::common::runtime().block_on(tether_core::snapshot::take_start(
        &ws,
        tether_git::Confinement::Sandboxed,
        &[],
    ));
    let mut spec = serde_json::json!({"max_iterations": 5});
    began.record(&mut spec);
    let run = store.create_run(RunKind::Goal, dir.path(), &spec).unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    // What the agent and the judge used, with the prompt cache's reads and writes.
    let used = [
        Event::IterationUsage {
            n: 1,
            input_tokens: 24_000,
            cached_input_tokens: 18_000,
            cache_write_input_tokens: 5000,
            output_tokens: 900,
            cost_usd: Some(0.0432),
            goals: vec!["add".into()],
            duration_ms: 0,
        },
        Event::JudgeUsage {
            judge: tether_store::JudgeRole::SignOff,
            goal_id: Some("add".into()),
            calls: 2,
            input_tokens: 6000,
            cached_input_tokens: 2000,
            cache_write_input_tokens: 0,
            output_tokens: 150,
            cost_usd: Some(0.0251),
        },
        Event::IterationCompleted {
            n: 1,
            summary: "added add".into(),
        },
        // A second iteration, stopped before it ended: the table says it was cut short.
        Event::IterationStarted { n: 2 },
    ];
    store.append_all(Some(&run), &used).unwrap();
    std::fs::write(
        dir.path().join("lib.rs"),
        "fn add() {}
fn sub() {}
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("notes.md"),
        "notes
",
    )
    .unwrap();
    store
        .approve_contract("plan.md", "add", "sha256:feed", "carol")
        .unwrap();
    let q = store
        .insert_question(&NewQuestion {
            run_id: Some(run.clone()),
            question: "Which database?".into(),
            options: vec!["Postgres".into(), "SQLite".into()],
            ..NewQuestion::default()
        })
        .unwrap();
    store.answer_question(&q.id, "2", "zulip", "ana").unwrap();
    store
        .append(
            Some(&run),
            &Event::MessageQueued {
                text: "use the cache".into(),
                by: "bob".into(),
                author: Author::Person,
            },
        )
        .unwrap();
    // The agent's own `tether say` and `tether pause`, said as the agent's.
    for event in [
        Event::MessageQueued {
            text: "the cache is done".into(),
            by: "the agent".into(),
            author: Author::Agent,
        },
        Event::PauseRequested {
            by: "the agent".into(),
            author: Author::Agent,
        },
    ] {
        store.append(Some(&run), &event).unwrap();
    }
    for (attempt, verdict, kind, reason) in [
        (
            1,
            Verdict::Reject,
            VerdictKind::JudgeRejected,
            "no test of add",
        ),
        (
            2,
            Verdict::Accept,
            VerdictKind::Accepted,
            "the judge accepted, citing 1 checked quote(s)",
        ),
    ] {
        store
            .insert_verdict(&NewVerdict {
                run_id: Some(run.clone()),
                goal_id: "add".into(),
                plan_path: "plan.md".into(),
                attempt,
                verify_exit: Some(0),
                verdict,
                kind,
                reason: reason.into(),
                checks: serde_json::json!([{"path": "src/lib.rs", "quote": "a + b",
                    "observation": "adds", "line": 2}]),
                missing: if attempt == 1 {
                    vec!["a test of add".into()]
                } else {
                    Vec::new()
                },
                judge_model: Some("judge-1".into()),
                transcript_path: None,
                contract_hash: None,
                judges: Vec::new(),
            })
            .unwrap();
    }
    store
        .append(
            Some(&run),
            &Event::RunFinished {
                outcome: Outcome::Completed,
            },
        )
        .unwrap();
    let out = tether(dir.path(), &["report"]).redact(r"r-[0-9a-z]+", "r-ID");
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!(
        out.stdout
            .replace(&tether_store::this_machine(), "[MACHINE]")
    );
    let written = dir.path().join(format!(".tether/runs/{run}/report.md"));
    assert!(written.is_file());
    assert!(
        out.stderr.contains("written to .tether/runs/"),
        "{}",
        out.stderr
    );
}

#[test]
fn validate_names_each_after_problem_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), fixture("after-broken.md")).unwrap();
    let out = tether(dir.path(), &["validate"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stdout);

    let json = tether(dir.path(), &["validate", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"after_cycle"), "{}", json.stdout);
}

#[test]
fn plan_shows_what_each_goal_waits_on() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("plan.md"), fixture("after.md")).unwrap();
    let out = tether(dir.path(), &["plan"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    insta::assert_snapshot!(out.stdout);
}
