//! Runs and the journal: append-only, projections in step with their events, seqs in order.

use tether_store::{Event, RunKind, RunStatus, Seq};
use tether_store_pg::Origin;
use tokio_postgres::error::SqlState;

use super::common::{raw, run, store};

#[tokio::test]
async fn the_journal_refuses_update_delete_and_truncate() {
    let (store, db) = store().await;
    let run = run(&store).await;
    let client = raw(&db).await;
    for sql in [
        "UPDATE events SET kind = 'rewritten'",
        "DELETE FROM events",
        "TRUNCATE events CASCADE",
    ] {
        let err = client.batch_execute(sql).await.unwrap_err();
        assert_eq!(
            err.code(),
            Some(&SqlState::RESTRICT_VIOLATION),
            "{sql}: {err}"
        );
        let message = err.as_db_error().unwrap().message();
        assert!(message.starts_with("events are append-only"), "{message}");
    }
    assert_eq!(store.events(&run, Seq::START, 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_projection_matches_the_journal() {
    let (store, _db) = store().await;
    let run = run(&store).await;
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .await
        .unwrap();
    store
        .append_all(
            Some(&run),
            &[
                Event::IterationCompleted {
                    n: 1,
                    summary: "fixed one".into(),
                },
                Event::IterationStarted { n: 2 },
            ],
        )
        .await
        .unwrap();
    let stored = store.run(&run).await.unwrap();
    assert_eq!(stored.kind, RunKind::Ralph);
    assert_eq!((stored.status, stored.iteration), (RunStatus::Running, 1));
    assert_eq!(stored.state.max_iterations, Some(5));
    assert_eq!(stored.state, store.rebuild_run_state(&run).await.unwrap());
    let events = store.events(&run, Seq::START, 10).await.unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "iteration_started",
            "iteration_completed",
            "iteration_started"
        ]
    );
    assert_eq!(stored.last_event_seq, events[3].seq);
    assert!(
        events
            .iter()
            .all(|e| e.event.is_some() && e.run_id.as_ref() == Some(&run))
    );
}

#[tokio::test]
async fn an_event_for_an_unknown_run_is_refused_and_nothing_is_written() {
    let (store, _db) = store().await;
    let unknown = "r-unknown1".parse().unwrap();
    let err = store
        .append(Some(&unknown), &Event::IterationStarted { n: 1 })
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            tether_store_pg::PgStoreError::NotFound { what: "run", .. }
        ),
        "{err:?}"
    );
    assert_eq!(store.last_seq().await.unwrap(), Seq::START);
    // The connection the failed append used went back to the pool out of its transaction:
    // the next appends commit, each on its own.
    let known = run(&store).await;
    for n in 1..=3 {
        store
            .append(Some(&known), &Event::IterationStarted { n })
            .await
            .unwrap();
    }
    let events = store.events(&known, Seq::START, 10).await.unwrap();
    assert_eq!(events.len(), 4, "run_started and three starts");
    assert_eq!(store.run(&known).await.unwrap().state.in_progress, Some(3));
}

#[tokio::test]
async fn concurrent_runs_append_and_readers_see_seqs_in_order() {
    let (store, _db) = store().await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let run = run(&store).await;
            for n in 1..=5 {
                store
                    .append(Some(&run), &Event::IterationStarted { n })
                    .await
                    .unwrap();
            }
            run
        }));
    }
    let mut runs = Vec::new();
    for task in tasks {
        runs.push(task.await.unwrap());
    }
    let all = store.events_all_after(Seq::START, 1000).await.unwrap();
    assert_eq!(all.len(), 20 * 6);
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(store.last_seq().await.unwrap(), all[119].seq);
    for run in &runs {
        let state = store.run(run).await.unwrap().state;
        assert_eq!(state, store.rebuild_run_state(run).await.unwrap());
    }
}

#[tokio::test]
async fn runs_list_newest_first_in_pages_with_where_they_live() {
    let (store, _db) = store().await;
    let first = run(&store).await;
    let origin = Origin {
        machine: "build-box".into(),
        workspace_root: "/srv/repo".into(),
        repo_remote: Some("git@example.com:team/repo.git".into()),
    };
    let second = store
        .create_run_from(
            RunKind::Goal,
            "/srv/repo/sub".as_ref(),
            &serde_json::json!({}),
            &origin,
        )
        .await
        .unwrap();
    let listed: Vec<_> = store
        .runs(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, [second.clone(), first.clone()]);
    assert_eq!(store.latest_run().await.unwrap().unwrap().id, second);
    let page: Vec<_> = store
        .runs_after(&second, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(page, std::slice::from_ref(&first));
    assert_eq!(store.run_origin(&second).await.unwrap(), origin);
    let local = store.run_origin(&first).await.unwrap();
    assert_eq!(local, Origin::local("/work".as_ref()));
    assert!(!local.machine.is_empty());
}

#[tokio::test]
async fn a_reader_following_the_whole_journal_while_runs_append_misses_nothing() {
    let (store, _db) = store().await;
    let mut writers = Vec::new();
    for _ in 0..10 {
        let store = store.clone();
        writers.push(tokio::spawn(async move {
            let run = run(&store).await;
            for n in 1..=30 {
                store
                    .append(Some(&run), &Event::IterationStarted { n })
                    .await
                    .unwrap();
            }
        }));
    }
    // Follows the journal the way the dashboard does, by the last seq it saw, while the
    // appends commit in whatever order they finish.
    let mut seen = Vec::new();
    let mut last = Seq::START;
    loop {
        let done = writers.iter().all(tokio::task::JoinHandle::is_finished);
        let page = store.events_all_after(last, 50).await.unwrap();
        if let Some(newest) = page.last() {
            last = newest.seq;
        }
        seen.extend(page.into_iter().map(|e| e.seq));
        if done && store.events_all_after(last, 1).await.unwrap().is_empty() {
            break;
        }
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let all: Vec<Seq> = store
        .events_all_after(Seq::START, 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(all.len(), 10 * 31);
    assert_eq!(seen, all, "the follower saw every event once, in order");
}
