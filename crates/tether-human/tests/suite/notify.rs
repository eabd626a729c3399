//! The shared notification listener: one socket for every wait of a broker, pokes that wake only
//! the waiters of the question they name, none lost in a burst.

use std::path::Path;
use std::time::Duration;

use tether_config::Workspace;
use tether_human::notify::{self, SharedListener, Subscription};
use tether_store::QuestionId;

const DEADLINE: Duration = Duration::from_secs(5);

fn id(n: usize) -> QuestionId {
    format!("q-{n:06}").parse().unwrap()
}

fn sockets(state_dir: &Path) -> usize {
    std::fs::read_dir(notify::dir(state_dir)).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
            .count()
    })
}

async fn woken(sub: &Subscription) {
    tokio::time::timeout(DEADLINE, sub.poked())
        .await
        .expect("the poke woke the waiter");
}

/// Whether a poke is waiting for `sub` right now (consuming it).
async fn has_poke(sub: &Subscription) -> bool {
    tokio::select! {
        biased;
        () = sub.poked() => true,
        () = std::future::ready(()) => false,
    }
}

#[tokio::test]
async fn one_socket_serves_every_wait_and_goes_away_with_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let state = Workspace::at(dir.path()).state_dir();
    let listener = SharedListener::new(state.clone());
    let clone = listener.clone();
    let subs: Vec<_> = (0..50)
        .map(|n| {
            if n % 2 == 0 {
                listener.subscribe(&id(n))
            } else {
                clone.subscribe(&id(n))
            }
        })
        .collect();
    assert!(subs.iter().all(Subscription::is_listening));
    assert_eq!(sockets(&state), 1);
    let path = listener.socket_path().unwrap();
    assert_eq!(clone.socket_path().unwrap(), path);
    drop(subs);
    assert_eq!(sockets(&state), 0);
    assert!(listener.socket_path().is_none());

    let again = listener.subscribe(&id(1));
    assert!(again.is_listening());
    assert_eq!(sockets(&state), 1);
}

#[tokio::test]
async fn a_poke_wakes_only_the_waiters_of_its_question() {
    let dir = tempfile::tempdir().unwrap();
    let state = Workspace::at(dir.path()).state_dir();
    let listener = SharedListener::new(state.clone());
    let (a, a_too, b) = (
        listener.subscribe(&id(1)),
        listener.subscribe(&id(1)),
        listener.subscribe(&id(2)),
    );
    notify::poke(&state, &id(1));
    woken(&a).await;
    woken(&a_too).await;
    // The datagram about question 1 has been handled in full: had it woken b, b would hold it.
    assert!(!has_poke(&b).await);
    notify::poke(&state, &id(2));
    woken(&b).await;
}

#[tokio::test]
async fn a_poke_naming_no_question_wakes_every_waiter() {
    let dir = tempfile::tempdir().unwrap();
    let state = Workspace::at(dir.path()).state_dir();
    let listener = SharedListener::new(state.clone());
    let subs: Vec<_> = (0..3).map(|n| listener.subscribe(&id(n))).collect();
    let sender = std::os::unix::net::UnixDatagram::unbound().unwrap();
    sender
        .send_to(b"!", listener.socket_path().unwrap())
        .unwrap();
    for sub in &subs {
        woken(sub).await;
    }
}

#[tokio::test]
async fn a_burst_of_pokes_larger_than_the_socket_queue_loses_none() {
    let dir = tempfile::tempdir().unwrap();
    let state = Workspace::at(dir.path()).state_dir();
    let listener = SharedListener::new(state.clone());
    let subs: Vec<_> = (0..300).map(|n| listener.subscribe(&id(n))).collect();
    let poker = std::thread::spawn(move || {
        for n in 0..300 {
            notify::poke(&state, &id(n));
        }
    });
    for sub in &subs {
        woken(sub).await;
    }
    poker.join().unwrap();
}

#[tokio::test]
async fn a_socket_path_too_long_leaves_waiters_on_the_slow_recheck() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("d".repeat(120));
    let listener = SharedListener::new(Workspace::at(deep).state_dir());
    let sub = listener.subscribe(&id(1));
    assert!(!sub.is_listening());
    assert!(listener.socket_path().is_none());
}
