//! Appending events, reading them back, and the run/iteration projections.

use std::time::Duration;

use rusqlite::Connection;
use serde_json::json;
use tether_store::{
    Event, IterationOutcome, Outcome, RunKind, RunStatus, Seq, Store, StoreError, StoreOptions,
};

use super::common::{assert_projection_matches_journal, memory_store, ralph_run, temp_db};

fn completed(n: u32) -> Event {
    Event::IterationCompleted {
        n,
        summary: format!("did {n}"),
    }
}

#[test]
fn create_run_writes_the_row_and_its_run_started_event_together() {
    let store = memory_store();
    let run = ralph_run(&store);
    let row = store.run(&run).unwrap();
    assert_eq!(row.kind, RunKind::Ralph);
    assert_eq!(row.status, RunStatus::Running);
    assert_eq!(row.workspace.to_str(), Some("/work/repo"));
    assert_eq!(row.spec["max_iterations"], 20);
    assert_eq!(row.state.max_iterations, Some(20));
    let events = store.events(&run, Seq::START, 10).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, "run_started");
    assert_eq!(row.last_event_seq, events[0].seq);
}

#[test]
fn appending_to_an_unknown_run_is_not_found_and_writes_nothing() {
    let store = memory_store();
    let ghost = "r-000000000000".parse().unwrap();
    match store.append(Some(&ghost), &completed(1)) {
        Err(StoreError::NotFound { what: "run", id }) => assert_eq!(id, "r-000000000000"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert_eq!(store.last_seq().unwrap(), Seq::START);
}

#[test]
fn appending_nothing_writes_nothing() {
    let store = memory_store();
    let run = ralph_run(&store);
    let before = store.run(&run).unwrap();
    assert_eq!(store.append_all(Some(&run), &[]).unwrap(), vec![]);
    assert_eq!(store.run(&run).unwrap(), before);
}

#[test]
fn events_page_by_seq_and_run_less_events_appear_only_in_the_global_feed() {
    let store = memory_store();
    let run = ralph_run(&store);
    let seqs = store
        .append_all(Some(&run), &[completed(1), completed(2), completed(3)])
        .unwrap();
    assert_eq!(seqs.len(), 3);
    let loose = store
        .append(
            None,
            &Event::RuleFired {
                rule: tether_store::Rule::Reminder,
                reason: "no run".into(),
            },
        )
        .unwrap();

    let page = store.events(&run, seqs[0], 1).unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].seq, seqs[1]);
    assert_eq!(page[0].event, Some(completed(2)));
    assert_eq!(store.events(&run, seqs[2], 10).unwrap(), vec![]);

    let all = store.events_all_after(seqs[2], 10).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!((all[0].seq, all[0].run_id.as_ref()), (loose, None));
    assert_eq!(store.last_seq().unwrap(), loose);
}

#[test]
fn iterations_are_projected_including_interruptions_and_reruns() {
    let store = memory_store();
    let run = ralph_run(&store);
    store
        .append_all(
            Some(&run),
            &[
                Event::IterationStarted { n: 1 },
                completed(1),
                Event::IterationStarted { n: 2 },
                Event::IterationFailed {
                    n: 2,
                    error: "agent crashed".into(),
                },
                Event::IterationStarted { n: 3 },
                // The process died here; the loop is resumed and runs 3 again.
                Event::Resumed {
                    by: "cli".into(),
                    reset_budget: false,
                    settings: None,
                },
                Event::IterationStarted { n: 4 },
            ],
        )
        .unwrap();
    let outcomes: Vec<_> = store
        .iterations(&run)
        .unwrap()
        .iter()
        .map(|i| (i.n, i.outcome, i.summary.clone()))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (1, Some(IterationOutcome::Completed), Some("did 1".into())),
            (
                2,
                Some(IterationOutcome::Failed),
                Some("agent crashed".into())
            ),
            (3, Some(IterationOutcome::Interrupted), None),
            (4, None, None),
        ]
    );
    let state = store.run(&run).unwrap().state;
    assert_eq!((state.iteration, state.in_progress), (2, Some(4)));
    assert_projection_matches_journal(&store, &run);
}

#[test]
fn delivering_messages_hands_each_over_once() {
    let store = memory_store();
    let run = ralph_run(&store);
    for text in ["first", "second"] {
        store
            .append(
                Some(&run),
                &Event::MessageQueued {
                    text: text.into(),
                    by: "me".into(),
                    author: tether_store::Author::Person,
                },
            )
            .unwrap();
    }
    let delivered = store.deliver(&run, 1).unwrap().messages;
    let texts: Vec<_> = delivered.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["first", "second"]);
    let before = store.last_seq().unwrap();
    assert_eq!(
        store.deliver(&run, 2).unwrap(),
        tether_store::Delivery::default()
    );
    assert_eq!(
        store.last_seq().unwrap(),
        before,
        "nothing recorded when nothing waits"
    );
    assert!(store.run(&run).unwrap().state.queued_messages.is_empty());
}

#[test]
fn finishing_a_run_updates_the_projection_columns() {
    let store = memory_store();
    let run = ralph_run(&store);
    store
        .append_all(
            Some(&run),
            &[
                Event::IterationStarted { n: 1 },
                completed(1),
                Event::RunFinished {
                    outcome: Outcome::BudgetExhausted,
                },
            ],
        )
        .unwrap();
    let row = store.run(&run).unwrap();
    assert_eq!((row.status, row.iteration), (RunStatus::BudgetExhausted, 1));
    assert_eq!(row.updated_at_ms, row.state.last_event_at_ms.unwrap());
}

#[test]
fn runs_are_listed_newest_first() {
    let store = memory_store();
    let first = ralph_run(&store);
    let second = store
        .create_run(RunKind::Goal, "/w".as_ref(), &json!({}))
        .unwrap();
    let ids: Vec<_> = store.runs(10).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![second.clone(), first]);
    assert_eq!(store.latest_run().unwrap().map(|r| r.id), Some(second));
    assert_eq!(store.runs(1).unwrap().len(), 1);
    assert!(memory_store().latest_run().unwrap().is_none());
}

#[test]
fn data_version_moves_when_another_connection_commits() {
    let (_dir, db) = temp_db();
    let watcher = Store::open(&db).unwrap();
    let writer = Store::open(&db).unwrap();
    let before = watcher.data_version().unwrap();
    ralph_run(&writer);
    assert_ne!(watcher.data_version().unwrap(), before);
}

#[test]
fn an_event_type_from_a_newer_tether_is_kept_raw_and_skipped_by_the_fold() {
    let (_dir, db) = temp_db();
    let store = Store::open(&db).unwrap();
    let run = ralph_run(&store);
    Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO events (run_id, at_ms, kind, payload) VALUES (?1, 5, 'future_thing', \
             '{\"type\":\"future_thing\",\"x\":1}')",
            [run.as_str()],
        )
        .unwrap();
    let events = store.events(&run, Seq::START, 10).unwrap();
    let future = &events[1];
    assert_eq!(
        (future.kind.as_str(), future.event.as_ref()),
        ("future_thing", None)
    );
    assert_eq!(future.payload, json!({ "type": "future_thing", "x": 1 }));
    let rebuilt = store.rebuild_run_state(&run).unwrap();
    assert_eq!(rebuilt.last_event_seq, future.seq);
    assert_eq!(rebuilt.status, RunStatus::Running);
    // The projection was not updated by the raw insert; refreshing it catches up.
    assert_eq!(store.refresh_projection(&run).unwrap(), rebuilt);
    assert_projection_matches_journal(&store, &run);
}

#[test]
fn a_writer_blocked_past_the_busy_timeout_gets_busy() {
    let (_dir, db) = temp_db();
    let store = Store::open_with(
        &db,
        &StoreOptions {
            busy_timeout: Duration::from_millis(50),
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let run = ralph_run(&store);
    let holder = Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let err = store.append(Some(&run), &completed(1)).unwrap_err();
    assert!(matches!(err, StoreError::Busy), "{err:?}");
    assert!(err.is_retryable());
    holder.execute_batch("ROLLBACK").unwrap();
    store.append(Some(&run), &completed(1)).unwrap();
}

#[cfg(unix)]
#[test]
fn a_workspace_path_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let store = memory_store();
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
    let err = store
        .create_run(RunKind::Ask, path, &json!({}))
        .unwrap_err();
    assert!(matches!(err, StoreError::NonUtf8Path { .. }), "{err:?}");
}
