//! Goals of a run of many goals claimed by workers: in order, one worker per goal, a lapsed
//! claim taken over and the old worker's late renewal and report refused, on both backends.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use tether_store::{GoalClaim, GoalState, Holder, Lapse, NewFleet, RunId, Store, StoreError};
use tether_testkit::wait_until;

use super::{Backend, on_both_backends, run};

on_both_backends!(
    workers_claim_the_ready_goals_in_order_and_nothing_else,
    a_lapsed_claim_is_taken_over_and_the_old_workers_writes_are_refused,
    racing_workers_never_share_a_goal,
);

/// A minute: no claim of these tests lapses by itself unless it is meant to.
const LONG: i64 = 60_000;

fn worker(n: u32) -> Holder {
    Holder {
        machine: format!("worker-{n}"),
        pid: n,
        workspace: PathBuf::from("/srv/tether"),
    }
}

/// A run of many goals `goals` long whose goals work on many machines (`remote`) or on this one.
fn fleet(store: &Store, goals: usize, remote: bool) -> RunId {
    let id = RunId::generate();
    store
        .begin_fleet(&NewFleet {
            id: id.clone(),
            workspace: "/work".into(),
            plan_path: "plan.md".into(),
            branch: format!("tether/{id}"),
            remote: remote.then(|| "/srv/git/repo.git".to_owned()),
            budget: None,
            parallel: 4,
            goals: (0..goals).map(|g| (format!("g{g}"), Vec::new())).collect(),
        })
        .unwrap();
    id
}

fn ready(store: &Store, fleet: &RunId, goal: &str) {
    store
        .set_fleet_goal(fleet, goal, GoalState::Ready, None)
        .unwrap();
}

fn claim(store: &Store, n: u32, ttl: i64) -> Option<GoalClaim> {
    loop {
        match store.claim_fleet_goal(&worker(n), ttl) {
            Err(StoreError::Busy) => continue,
            other => return other.unwrap(),
        }
    }
}

fn lost(result: Result<impl std::fmt::Debug, StoreError>) -> Lapse {
    match result {
        Err(StoreError::LeaseLost { lapse, .. }) => lapse,
        other => panic!("not a lost lease: {other:?}"),
    }
}

fn workers_claim_the_ready_goals_in_order_and_nothing_else(b: &Backend) {
    // Goals of a run on this machine alone, and a waiting goal, are no worker's.
    let here = fleet(&b.store, 1, false);
    ready(&b.store, &here, "g0");
    let there = fleet(&b.store, 3, true);
    assert_eq!(claim(&b.store, 1, LONG), None);
    ready(&b.store, &there, "g1");
    ready(&b.store, &there, "g0");
    let first = claim(&b.other(), 1, LONG).unwrap();
    assert_eq!(
        (first.fleet.id.clone(), first.goal_id.as_str()),
        (there.clone(), "g0")
    );
    assert_eq!(first.token, 1);
    assert_eq!(first.fleet.remote.as_deref(), Some("/srv/git/repo.git"));
    let goal = &first.fleet.goals[0];
    assert_eq!(
        (goal.state, goal.machine.as_deref()),
        (GoalState::Working, Some("worker-1"))
    );
    // Its heartbeat: when it was claimed, until when it holds.
    let lease = goal.lease.unwrap();
    assert_eq!(lease.expires_at_ms, first.expires_at_ms);
    assert!(lease.renewed_at_ms < lease.expires_at_ms);
    assert_eq!(
        first.fleet.goals[2].lease, None,
        "no worker holds a waiting goal"
    );
    let second = claim(&b.store, 2, LONG).unwrap();
    assert_eq!(second.goal_id, "g1");
    assert_eq!(claim(&b.store, 3, LONG), None, "g2 waits");

    // The worker reports its goal run, then the goal signed off: its lease ends.
    let goal_run = run(&b.store);
    b.store
        .report_fleet_goal(
            &there,
            "g0",
            first.token,
            GoalState::Working,
            Some(&goal_run),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let renewed = b
        .store
        .renew_fleet_goal(&there, "g0", first.token, LONG)
        .unwrap();
    let beat = b.other().fleet(&there).unwrap().goals[0].lease.unwrap();
    assert_eq!(beat.expires_at_ms, renewed);
    assert!(
        beat.renewed_at_ms > lease.renewed_at_ms,
        "{beat:?} {lease:?}"
    );
    b.store
        .report_fleet_goal(&there, "g0", first.token, GoalState::SignedOff, None)
        .unwrap();
    let g0 = b.other().fleet(&there).unwrap().goals.remove(0);
    assert_eq!(
        (g0.state, g0.run_id),
        (GoalState::SignedOff, Some(goal_run))
    );
    assert_eq!(g0.lease, None, "reported: no worker holds it");
    assert_eq!(
        lost(b.store.renew_fleet_goal(&there, "g0", first.token, LONG)),
        Lapse::Released
    );
    // A conflicting merge offered to be settled is claimed as one to settle.
    b.store
        .set_fleet_goal(&there, "g1", GoalState::Conflicted, None)
        .unwrap();
    let settle = claim(&b.store, 2, LONG).unwrap();
    assert_eq!((settle.goal_id.as_str(), settle.settle), ("g1", true));
    assert_eq!(settle.fleet.goals[1].state, GoalState::Settling);
    assert!(!first.settle);
    // A run that ended offers nothing.
    ready(&b.store, &there, "g2");
    b.store.end_fleet(&there, "interrupted").unwrap();
    assert_eq!(claim(&b.store, 3, LONG), None);
    assert_eq!(
        lost(b.store.renew_fleet_goal(&there, "g2", 1, LONG)),
        Lapse::Unclaimed
    );
}

fn a_lapsed_claim_is_taken_over_and_the_old_workers_writes_are_refused(b: &Backend) {
    let id = fleet(&b.store, 1, true);
    ready(&b.store, &id, "g0");
    let old = claim(&b.store, 1, 300).unwrap();
    assert_eq!(
        claim(&b.store, 2, LONG),
        None,
        "held while its lease is live"
    );
    let new = wait_until("the lease to lapse", Duration::from_secs(10), || {
        claim(&b.other(), 2, LONG)
    })
    .unwrap();
    assert_eq!((new.goal_id.as_str(), new.token), ("g0", 2));
    assert_eq!(new.fleet.goals[0].machine.as_deref(), Some("worker-2"));
    // The old worker wakes: nothing it says lands.
    assert_eq!(
        lost(b.store.renew_fleet_goal(&id, "g0", old.token, LONG)),
        Lapse::TakenOver
    );
    assert_eq!(
        lost(
            b.store
                .report_fleet_goal(&id, "g0", old.token, GoalState::SignedOff, None)
        ),
        Lapse::TakenOver
    );
    assert_eq!(
        b.store.fleet(&id).unwrap().goals[0].state,
        GoalState::Working
    );
    b.store
        .report_fleet_goal(&id, "g0", new.token, GoalState::Ended, None)
        .unwrap();
    assert_eq!(b.store.fleet(&id).unwrap().goals[0].state, GoalState::Ended);
    assert!(matches!(
        b.store.renew_fleet_goal(&id, "nope", 1, LONG),
        Err(StoreError::NotFound { .. })
    ));
}

fn racing_workers_never_share_a_goal(b: &Backend) {
    let id = fleet(&b.store, 8, true);
    for g in 0..8 {
        ready(&b.store, &id, &format!("g{g}"));
    }
    let claimed: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=3)
            .map(|n| {
                let store = b.other();
                s.spawn(move || {
                    let mut mine = Vec::new();
                    while let Some(c) = claim(&store, n, LONG) {
                        mine.push(c.goal_id);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let unique: BTreeSet<&String> = claimed.iter().collect();
    assert_eq!((claimed.len(), unique.len()), (8, 8), "{claimed:?}");
}
