//! Wake-ups across connections: an answer given elsewhere reaches a waiter, even across a
//! server restart.

use std::sync::Arc;

use tether_store::QuestionId;
use tether_store_pg::{Channel, Listener, PgStore, Wake};
use tether_testkit::postgres::PgCluster;

use super::common::{DEADLINE, config, question, run, store};

/// What a broker does: read the store, and on every wake-up read it again, until answered.
/// Returns the answer and how many times the listener asked for a re-read.
async fn wait_for_answer(
    store: PgStore,
    mut listener: Listener,
    id: QuestionId,
) -> (String, usize) {
    let mut resyncs = 0;
    loop {
        // A read on a connection cut by the restart fails; the listener's Resync says when to
        // read again.
        if let Ok(Some(answer)) = store.question(&id).await.map(|q| q.answer) {
            return (answer, resyncs);
        }
        match listener
            .next()
            .await
            .expect("the listener lives as long as the waiter")
        {
            Wake::Resync => resyncs += 1,
            Wake::Notified { .. } => {}
        }
    }
}

#[tokio::test]
async fn an_answer_from_another_connection_wakes_the_waiter() {
    let (store, db) = store().await;
    let run = run(&store).await;
    let asked = store.insert_question(&question(&run, "go?")).await.unwrap();
    let mut listener = Listener::start(config(&db), &Channel::ALL).await.unwrap();
    let elsewhere = PgStore::connect(config(&db)).await.unwrap();
    elsewhere
        .answer_question(&asked.id, "go", "cli", "ana")
        .await
        .unwrap();
    let mut seen = Vec::new();
    while !seen.iter().any(|w| {
        matches!(
            w,
            Wake::Notified {
                channel: Channel::Answers,
                ..
            }
        )
    }) {
        let wake = tokio::time::timeout(DEADLINE, listener.next())
            .await
            .unwrap();
        seen.push(wake.unwrap());
    }
    assert!(seen.contains(&Wake::Notified {
        channel: Channel::Answers,
        payload: asked.id.to_string(),
    }));
    assert!(seen.contains(&Wake::Notified {
        channel: Channel::Events,
        payload: run.to_string(),
    }));
    let waiter = wait_for_answer(store, listener, asked.id);
    let (answer, _) = tokio::time::timeout(DEADLINE, waiter).await.unwrap();
    assert_eq!(answer, "go");
}

#[tokio::test]
async fn a_waiting_broker_returns_the_answer_given_elsewhere() {
    let (store, db) = store().await;
    let run = run(&store).await;
    let asked = store.insert_question(&question(&run, "go?")).await.unwrap();
    let listener = Listener::start(config(&db), &[Channel::Answers])
        .await
        .unwrap();
    let waiter = tokio::spawn(wait_for_answer(store.clone(), listener, asked.id.clone()));
    store
        .answer_question(&asked.id, "yes", "web", "bo")
        .await
        .unwrap();
    let (answer, resyncs) = tokio::time::timeout(DEADLINE, waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((answer.as_str(), resyncs), ("yes", 0));
}

#[tokio::test]
async fn a_server_restart_while_waiting_loses_no_answer() {
    let cluster = tokio::task::spawn_blocking(PgCluster::start).await.unwrap();
    let cluster = Arc::new(cluster.expect("PostgreSQL for the tests (run ./test.sh)"));
    let db = PgCluster::create_database(&cluster).unwrap();
    let store = PgStore::connect(config(&db)).await.unwrap();
    let run = run(&store).await;
    let asked = store
        .insert_question(&question(&run, "still there?"))
        .await
        .unwrap();
    let listener = Listener::start(config(&db), &[Channel::Answers])
        .await
        .unwrap();
    let waiter = tokio::spawn(wait_for_answer(store, listener, asked.id.clone()));

    let restarting = Arc::clone(&cluster);
    tokio::task::spawn_blocking(move || restarting.restart())
        .await
        .unwrap()
        .unwrap();
    let elsewhere = PgStore::connect(config(&db)).await.unwrap();
    elsewhere
        .answer_question(&asked.id, "yes", "cli", "ana")
        .await
        .unwrap();

    let (answer, resyncs) = tokio::time::timeout(DEADLINE, waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer, "yes");
    assert!(resyncs >= 1, "the listener reconnected {resyncs} times");
}

#[tokio::test]
async fn a_pause_request_wakes_control_listeners_and_new_events_wake_event_listeners() {
    let (store, db) = store().await;
    let run = run(&store).await;
    let mut control = Listener::start(config(&db), &[Channel::Control])
        .await
        .unwrap();
    let mut events = Listener::start(config(&db), &[Channel::Events])
        .await
        .unwrap();
    store
        .append(Some(&run), &tether_store::Event::IterationStarted { n: 1 })
        .await
        .unwrap();
    let pause = tether_store::Event::PauseRequested {
        by: "ana".into(),
        author: tether_store::Author::Person,
    };
    store.append(Some(&run), &pause).await.unwrap();
    let woken = tokio::time::timeout(DEADLINE, control.next())
        .await
        .unwrap();
    let expected = |channel| Wake::Notified {
        channel,
        payload: run.to_string(),
    };
    // The iteration's event is no control request: the first control wake-up is the pause.
    assert_eq!(woken, Some(expected(Channel::Control)));
    for _ in 0..2 {
        let woken = tokio::time::timeout(DEADLINE, events.next()).await.unwrap();
        assert_eq!(woken, Some(expected(Channel::Events)));
    }
}
