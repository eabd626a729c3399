//! Who drives a run: claiming, renewing and releasing its lease, and the fencing token that
//! refuses a lapsed holder's late writes, on both backends.

use std::path::PathBuf;
use std::time::Duration;

use tether_store::{Claim, Event, Holder, Lapse, Lease, RunId, Store, StoreError};
use tether_testkit::wait_until;

use super::{Backend, on_both_backends, run};

on_both_backends!(
    one_process_holds_a_run_at_a_time,
    a_holder_known_to_be_gone_is_taken_over_at_once,
    a_lapsed_lease_is_taken_over_and_its_late_writes_are_refused,
    every_claim_draws_a_greater_token,
    racing_claims_leave_one_holder,
    a_run_that_does_not_exist_cannot_be_claimed,
);

/// A minute: no lease of these tests lapses by itself unless it is meant to.
const LONG: i64 = 60_000;

fn holder(pid: u32) -> Holder {
    Holder {
        machine: "m1".into(),
        pid,
        workspace: PathBuf::from("/work"),
    }
}

/// Every holder is alive, as far as the caller knows.
fn alive(_: &Holder) -> bool {
    false
}

fn claimed(claim: Claim) -> Lease {
    match claim {
        Claim::Claimed(lease) => lease,
        Claim::Held(lease) => panic!("held by {}", lease.holder),
    }
}

fn lost(result: Result<impl std::fmt::Debug, StoreError>) -> Lapse {
    match result {
        Err(StoreError::LeaseLost { lapse, .. }) => lapse,
        other => panic!("not a lost lease: {other:?}"),
    }
}

fn note(text: &str) -> Event {
    Event::IterationCompleted {
        n: 1,
        summary: text.into(),
    }
}

fn summaries(store: &Store, id: &RunId) -> Vec<String> {
    store
        .events(id, tether_store::Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            Some(Event::IterationCompleted { summary, .. }) => Some(summary),
            _ => None,
        })
        .collect()
}

fn one_process_holds_a_run_at_a_time(b: &Backend) {
    let id = run(&b.store);
    assert_eq!(b.store.run_lease(&id).unwrap(), None);
    let a = claimed(b.store.claim_run(&id, &holder(1), LONG, &alive).unwrap());
    assert_eq!((a.token, a.holder.pid), (1, 1));
    // Another process, through its own handle, sees the holder and cannot claim.
    let other = b.other();
    assert_eq!(
        other.run_lease(&id).unwrap().map(|l| l.holder),
        Some(holder(1))
    );
    match other.claim_run(&id, &holder(2), LONG, &alive).unwrap() {
        Claim::Held(lease) => assert_eq!(lease.holder, holder(1)),
        Claim::Claimed(lease) => panic!("two holders: {lease:?}"),
    }
    let renewed = b.store.renew_run(&id, a.token, LONG).unwrap();
    assert!(renewed.expires_at_ms >= a.expires_at_ms);
    b.store
        .append_fenced(&id, a.token, &[note("a's work")])
        .unwrap();
    // Released: nobody holds it, and the next claim is another's.
    assert!(b.store.release_run(&id, a.token).unwrap());
    assert!(!b.store.release_run(&id, a.token).unwrap(), "released once");
    assert_eq!(other.run_lease(&id).unwrap(), None);
    assert_eq!(
        lost(b.store.append_fenced(&id, a.token, &[note("late")])),
        Lapse::Released
    );
    let c = claimed(other.claim_run(&id, &holder(2), LONG, &alive).unwrap());
    assert_eq!(c.token, 2);
    assert_eq!(
        lost(b.store.renew_run(&id, a.token, LONG)),
        Lapse::TakenOver
    );
    assert_eq!(summaries(&b.store, &id), ["a's work"]);
}

fn a_lapsed_lease_is_taken_over_and_its_late_writes_are_refused(b: &Backend) {
    let id = run(&b.store);
    let a = claimed(b.store.claim_run(&id, &holder(1), 30, &alive).unwrap());
    // A holder paused past its lease (it never renewed): the lease lapses by itself.
    wait_until("the lease to lapse", Duration::from_secs(10), || {
        b.store.run_lease(&id).unwrap().is_none().then_some(())
    })
    .unwrap();
    assert_eq!(
        lost(b.store.append_fenced(&id, a.token, &[note("late")])),
        Lapse::Expired
    );
    assert_eq!(lost(b.store.renew_run(&id, a.token, LONG)), Lapse::Expired);
    // Any process may take it up; the one that lapsed writes nothing after.
    let other = b.other();
    let c = claimed(other.claim_run(&id, &holder(2), LONG, &alive).unwrap());
    assert!(c.token > a.token);
    other
        .append_fenced(&id, c.token, &[note("c's work")])
        .unwrap();
    assert_eq!(
        lost(b.store.append_fenced(&id, a.token, &[note("late")])),
        Lapse::TakenOver
    );
    assert_eq!(summaries(&b.store, &id), ["c's work"]);
    // A run never claimed refuses every token.
    let fresh = run(&b.store);
    assert_eq!(
        lost(b.store.append_fenced(&fresh, 1, &[note("x")])),
        Lapse::Unclaimed
    );
}

fn every_claim_draws_a_greater_token(b: &Backend) {
    let id = run(&b.store);
    let mut last = 0;
    for pid in [1, 2, 3] {
        let lease = claimed(b.store.claim_run(&id, &holder(pid), LONG, &alive).unwrap());
        assert!(lease.token > last, "{} after {last}", lease.token);
        last = lease.token;
        b.store.release_run(&id, lease.token).unwrap();
    }
    // The same holder claiming again (a process taking its run up anew) draws a new token too.
    let first = claimed(b.store.claim_run(&id, &holder(9), LONG, &alive).unwrap());
    let again = claimed(b.store.claim_run(&id, &holder(9), LONG, &alive).unwrap());
    assert!(again.token > first.token);
    assert_eq!(
        lost(b.store.append_fenced(&id, first.token, &[note("x")])),
        Lapse::TakenOver
    );
}

fn racing_claims_leave_one_holder(b: &Backend) {
    let id = run(&b.store);
    let claims: Vec<Claim> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=6)
            .map(|pid| {
                let store = b.other();
                let id = id.clone();
                s.spawn(move || {
                    loop {
                        match store.claim_run(&id, &holder(pid), LONG, &alive) {
                            Err(StoreError::Busy) => continue,
                            other => break other.unwrap(),
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<_> = claims
        .iter()
        .filter_map(|c| match c {
            Claim::Claimed(lease) => Some(lease),
            Claim::Held(_) => None,
        })
        .collect();
    assert_eq!(winners.len(), 1, "{claims:?}");
    for claim in &claims {
        if let Claim::Held(lease) = claim {
            assert_eq!(lease.holder, winners[0].holder);
        }
    }
}

fn a_run_that_does_not_exist_cannot_be_claimed(b: &Backend) {
    match b
        .store
        .claim_run(&RunId::generate(), &holder(1), LONG, &alive)
    {
        Err(StoreError::NotFound { what: "run", .. }) => {}
        other => panic!("{other:?}"),
    }
}

fn a_holder_known_to_be_gone_is_taken_over_at_once(b: &Backend) {
    let id = run(&b.store);
    let a = claimed(b.store.claim_run(&id, &holder(1), LONG, &alive).unwrap());
    // The caller knows pid 1 died (no process holds the run's lock on its machine).
    let gone = |h: &Holder| h.pid == 1;
    let c = claimed(b.store.claim_run(&id, &holder(2), LONG, &gone).unwrap());
    assert!(c.token > a.token);
    assert_eq!(
        lost(b.store.append_fenced(&id, a.token, &[note("late")])),
        Lapse::TakenOver
    );
}
