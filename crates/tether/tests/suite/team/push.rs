//! `tether store push`: a workspace's history moves into the team store with its ids and
//! times; pushing again adds nothing, and a run pushed while running gets only what it lacked.

use serde_json::{Value, json};
use tether_store::{Event, NewQuestion, NewVerdict, RunKind, Seq, Store, Verdict, VerdictKind};
use tether_store_pg::TeamStore;

use super::{Machine, database};
use crate::common::text;

const PLAN: &str = "# Plan: ship\n\n## Goal: Ship it\n<!-- id: ship -->\nstatus: active\n\
                    done_when: it ships\nverify: true\n\n## Log\n";

/// A workspace with a history of its own: a finished run with iterations, an answered question
/// with choices, a verdict; a question of no run; an approved contract.
fn local_history(ws: &std::path::Path) -> (Store, tether_store::RunId) {
    std::fs::write(ws.join("plan.md"), PLAN).unwrap();
    let store = Store::open(ws.join(".tether/tether.db")).unwrap();
    let run = store
        .create_run(RunKind::Goal, ws, &json!({"plan": "plan.md"}))
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    let q = store
        .insert_question(&NewQuestion {
            run_id: Some(run.clone()),
            question: "Which database?".into(),
            options: vec!["Postgres".into(), "SQLite".into()],
            ..NewQuestion::default()
        })
        .unwrap();
    store
        .record_post(&q.id, "zulip", &json!({"message": 7}))
        .unwrap();
    store.answer_question(&q.id, "2", "zulip", "ana").unwrap();
    store
        .append(
            Some(&run),
            &Event::IterationCompleted {
                n: 1,
                summary: "chose SQLite".into(),
            },
        )
        .unwrap();
    store
        .insert_verdict(&NewVerdict {
            run_id: Some(run.clone()),
            goal_id: "ship".into(),
            plan_path: "plan.md".into(),
            attempt: 1,
            verify_exit: Some(0),
            verdict: Verdict::Accept,
            kind: VerdictKind::Accepted,
            reason: "it ships".into(),
            checks: json!([]),
            missing: Vec::new(),
            judge_model: Some("judge".into()),
            transcript_path: None,
            contract_hash: Some("h1".into()),
            judges: Vec::new(),
        })
        .unwrap();
    store
        .approve_contract("plan.md", "ship", "h1", "ana")
        .unwrap();
    let loose = store
        .insert_question(&NewQuestion {
            question: "Lunch?".into(),
            ..NewQuestion::default()
        })
        .unwrap();
    store
        .answer_question(&loose.id, "yes", "cli", "bob")
        .unwrap();
    (store, run)
}

/// A run's state as two stores compare: seqs are each store's own.
fn comparable(mut state: tether_store::RunState) -> tether_store::RunState {
    state.last_event_seq = Seq::START;
    state
}

fn push(m: &Machine) -> Value {
    let out = m.run(&["store", "push", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_workspace_history_is_pushed_once_with_its_ids_times_and_projections() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let (local, run) = local_history(alpha.path());

    let first = push(&alpha);
    assert_eq!(
        (first["runs_copied"].as_u64(), first["events"].as_u64()),
        (Some(1), Some(6)),
        "{first}"
    );
    assert_eq!(
        (first["questions"].as_u64(), first["approvals"].as_u64()),
        (Some(1), Some(1))
    );
    let again = push(&alpha);
    assert_eq!(
        (
            again["runs_already_there"].as_u64(),
            again["events"].as_u64(),
            again["questions"].as_u64(),
            again["approvals"].as_u64()
        ),
        (Some(1), Some(0), Some(0), Some(0)),
        "{again}"
    );

    let team = Store::from_backend(Box::new(
        TeamStore::connect(db.url().parse().unwrap())
            .unwrap()
            .scoped(&tether_store::Origin {
                machine: "alpha".into(),
                workspace_root: alpha.path().to_path_buf(),
                repo_remote: None,
            }),
    ));
    let there = team.run(&run).unwrap();
    let here = local.run(&run).unwrap();
    assert_eq!(
        (there.state.clone(), there.created_at_ms),
        (here.state.clone(), here.created_at_ms)
    );
    assert_eq!(
        team.iterations(&run).unwrap(),
        local.iterations(&run).unwrap()
    );
    let times = |s: &Store| -> Vec<(String, i64)> {
        s.events(&run, Seq::START, 100)
            .unwrap()
            .into_iter()
            .map(|e| (e.kind, e.at_ms))
            .collect()
    };
    assert_eq!(times(&team), times(&local));
    let q = &team.questions_for_run(&run).unwrap()[0];
    assert_eq!(
        (q.answer.as_deref(), q.choice, q.responder.as_deref()),
        (Some("SQLite"), Some(1), Some("ana"))
    );
    assert_eq!(team.posts(&q.id).unwrap().len(), 1);
    assert!(team.has_accepted_signoff("plan.md", "ship").unwrap());
    assert_eq!(
        team.approval("plan.md", "ship")
            .unwrap()
            .unwrap()
            .contract_hash,
        "h1"
    );
    assert_eq!(team.question_history(10).unwrap().len(), 2);

    // Another machine reads the pushed run.
    let beta = Machine::new("beta", &db.url());
    let status = beta.run(&["status", run.as_str()]);
    assert!(
        text(&status.stdout).contains(run.as_str()),
        "{}",
        text(&status.stderr)
    );
}

#[test]
fn a_run_pushed_while_running_gets_only_the_events_it_lacked() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let (local, run) = local_history(alpha.path());
    push(&alpha);
    local
        .append(Some(&run), &Event::IterationStarted { n: 2 })
        .unwrap();
    local
        .append(
            Some(&run),
            &Event::IterationCompleted {
                n: 2,
                summary: "shipped".into(),
            },
        )
        .unwrap();
    let second = push(&alpha);
    assert_eq!(
        (second["runs_extended"].as_u64(), second["events"].as_u64()),
        (Some(1), Some(2)),
        "{second}"
    );
    let team = Store::from_backend(Box::new(
        TeamStore::connect(db.url().parse().unwrap()).unwrap(),
    ));
    let there = team.run(&run).unwrap().state;
    assert_eq!(there, team.rebuild_run_state(&run).unwrap());
    assert_eq!(
        comparable(there),
        comparable(local.run(&run).unwrap().state)
    );
    assert_eq!(team.events(&run, Seq::START, 100).unwrap().len(), 8);

    // A copy that went its own way (paused from another machine) is left alone.
    team.append(
        Some(&run),
        &Event::PauseRequested {
            by: "carol".into(),
            author: tether_store::Author::Person,
        },
    )
    .unwrap();
    local
        .append(Some(&run), &Event::IterationStarted { n: 3 })
        .unwrap();
    let third = push(&alpha);
    assert_eq!(third["runs_diverged"], json!([run.as_str()]), "{third}");
    let out = alpha.run(&["store", "push"]);
    assert!(
        text(&out.stdout).contains("left alone"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn pushing_needs_a_team_store_and_a_history() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::run(dir.path(), &["store", "push"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no team store to push to"),
        "{}",
        text(&out.stderr)
    );
    let out = crate::common::run(
        dir.path(),
        &["store", "push", "--store", "postgres://u@127.0.0.1:9/x"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no history to push"),
        "{}",
        text(&out.stderr)
    );
}
