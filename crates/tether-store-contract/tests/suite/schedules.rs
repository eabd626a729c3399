//! Goals on a schedule: added once per name, listed, paused and resumed, removed; each fire
//! claimed once however many schedulers race for it, renewed and ended with its token, the
//! failures in a row counted until they pause the schedule, and an overdue spell marked once;
//! a token never handed out again, even to a schedule removed and added again under its name;
//! a fire's run recorded as it starts, and a fire whose lease lapsed abandoned once; on both
//! backends.

use std::path::Path;

use tether_store::{FireEnd, Holder, Lapse, NewSchedule, StoreError};

use super::{Backend, on_both_backends, run};

on_both_backends!(
    a_schedule_is_added_once_listed_paused_resumed_and_removed,
    each_fire_is_claimed_once_and_ended_by_its_token,
    failures_in_a_row_pause_the_schedule_once,
    an_overdue_spell_is_marked_once_and_a_fire_ends_it,
    racing_schedulers_claim_one_fire_once,
    a_schedule_added_again_under_its_name_refuses_the_removed_ones_tokens,
    the_time_a_paused_schedule_was_resumed_is_kept,
    a_fire_records_its_run_when_it_starts_and_a_lapsed_one_is_abandoned_once,
);

const WS: &str = "/work";

fn new(name: &str) -> NewSchedule {
    NewSchedule {
        workspace: WS.into(),
        name: name.into(),
        timing: "every 60s".into(),
        work: serde_json::json!({"kind": "ralph", "prompt": "tidy up"}),
    }
}

fn holder() -> Holder {
    Holder::this_process(WS)
}

fn ws() -> &'static Path {
    Path::new(WS)
}

/// The fire token schedule `name` of [`WS`] stands at.
fn token(b: &Backend, name: &str) -> i64 {
    b.other().schedule(ws(), name).unwrap().fire
}

fn a_schedule_is_added_once_listed_paused_resumed_and_removed(b: &Backend) {
    assert!(b.store.add_schedule(&new("nightly")).unwrap());
    assert!(
        !b.store.add_schedule(&new("nightly")).unwrap(),
        "one per name"
    );
    assert!(b.store.add_schedule(&new("hourly")).unwrap());
    let elsewhere = NewSchedule {
        workspace: "/other".into(),
        ..new("nightly")
    };
    assert!(
        b.store.add_schedule(&elsewhere).unwrap(),
        "names are a workspace's"
    );

    let listed = b.other().schedules(ws()).unwrap();
    let names: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["hourly", "nightly"]);
    let nightly = &listed[1];
    assert_eq!(nightly.timing, "every 60s");
    assert_eq!(nightly.work["prompt"], "tidy up");
    assert_eq!((nightly.failures, nightly.paused), (0, false));
    let elsewhere = b.other().schedule(Path::new("/other"), "nightly").unwrap();
    assert_ne!(
        listed[0].fire, nightly.fire,
        "each added with a token of its own"
    );
    assert_ne!(
        elsewhere.fire, nightly.fire,
        "each added with a token of its own"
    );
    assert_eq!(
        (nightly.last_fire_ms, nightly.last_outcome.as_deref()),
        (None, None)
    );

    assert!(b.store.pause_schedule(ws(), "nightly", true).unwrap());
    assert!(b.other().schedule(ws(), "nightly").unwrap().paused);
    assert!(b.store.pause_schedule(ws(), "nightly", false).unwrap());
    assert!(!b.other().schedule(ws(), "nightly").unwrap().paused);
    assert!(!b.store.pause_schedule(ws(), "none", true).unwrap());

    assert!(b.store.remove_schedule(ws(), "nightly").unwrap());
    assert!(!b.store.remove_schedule(ws(), "nightly").unwrap());
    assert!(matches!(
        b.other().schedule(ws(), "nightly"),
        Err(StoreError::NotFound {
            what: "schedule",
            ..
        })
    ));
    assert_eq!(b.store.schedules(Path::new("/other")).unwrap().len(), 1);
}

fn each_fire_is_claimed_once_and_ended_by_its_token(b: &Backend) {
    b.store.add_schedule(&new("nightly")).unwrap();
    let added = token(b, "nightly");
    let claim = b
        .store
        .claim_schedule_fire(ws(), "nightly", added, 1_000, &holder(), 60_000)
        .unwrap()
        .expect("the first fire");
    let first = claim.token;
    assert!(first > added, "{first} after {added}");
    // The same fire again, or the next while this one goes on: refused.
    let again = b
        .other()
        .claim_schedule_fire(ws(), "nightly", added, 1_000, &holder(), 60_000);
    assert_eq!(again.unwrap(), None);
    let next = b
        .other()
        .claim_schedule_fire(ws(), "nightly", first, 2_000, &holder(), 60_000);
    assert_eq!(next.unwrap(), None, "a fire goes on");
    let going = b.other().schedule(ws(), "nightly").unwrap();
    assert_eq!((going.fire, going.last_fire_ms), (first, Some(1_000)));
    assert!(going.expires_at_ms > 0);
    assert_eq!(going.machine.as_deref(), Some(holder().machine.as_str()));

    assert!(
        b.store
            .renew_schedule_fire(ws(), "nightly", first, 60_000)
            .unwrap()
            > 0
    );
    let stale = b.store.renew_schedule_fire(ws(), "nightly", added, 60_000);
    assert!(
        matches!(
            stale,
            Err(StoreError::LeaseLost {
                lapse: Lapse::TakenOver,
                ..
            })
        ),
        "{stale:?}"
    );
    let ran = run(&b.store);
    let end = FireEnd {
        run: Some(ran.clone()),
        outcome: "done".into(),
        done: true,
    };
    let ended = b
        .store
        .end_schedule_fire(ws(), "nightly", first, &end, 3)
        .unwrap();
    assert_eq!((ended.failures, ended.paused_now), (0, false));
    let twice = b.store.end_schedule_fire(ws(), "nightly", first, &end, 3);
    assert!(matches!(
        twice,
        Err(StoreError::LeaseLost {
            lapse: Lapse::Released,
            ..
        })
    ));
    let done = b.other().schedule(ws(), "nightly").unwrap();
    assert_eq!(done.last_run.as_ref(), Some(&ran));
    assert_eq!(done.last_outcome.as_deref(), Some("done"));
    assert_eq!(done.expires_at_ms, 0);
    // Ended, the next fire may be claimed.
    let second = b
        .store
        .claim_schedule_fire(ws(), "nightly", first, 2_000, &holder(), 60_000)
        .unwrap()
        .expect("the second fire")
        .token;
    assert!(second > first, "{second} after {first}");
    // A fire whose scheduler stopped renewing it lapses: the next may be claimed over it.
    b.store
        .renew_schedule_fire(ws(), "nightly", second, -1)
        .unwrap();
    let over = b
        .store
        .claim_schedule_fire(ws(), "nightly", second, 3_000, &holder(), 60_000)
        .unwrap()
        .expect("a fire over the lapsed one");
    assert!(over.token > second);
    let late = b.store.end_schedule_fire(ws(), "nightly", second, &end, 3);
    assert!(
        matches!(late, Err(StoreError::LeaseLost { .. })),
        "{late:?}"
    );
}

fn failures_in_a_row_pause_the_schedule_once(b: &Backend) {
    b.store.add_schedule(&new("flaky")).unwrap();
    let failed = FireEnd {
        run: None,
        outcome: "failed: the model is unavailable".into(),
        done: false,
    };
    let mut paused = Vec::new();
    for n in 0..3 {
        let seen = token(b, "flaky");
        let claim = b
            .store
            .claim_schedule_fire(ws(), "flaky", seen, 1_000 * n, &holder(), 60_000)
            .unwrap()
            .expect("a fire");
        let ended = b
            .store
            .end_schedule_fire(ws(), "flaky", claim.token, &failed, 3)
            .unwrap();
        paused.push((ended.failures, ended.paused_now));
    }
    assert_eq!(paused, [(1, false), (2, false), (3, true)]);
    let flaky = b.other().schedule(ws(), "flaky").unwrap();
    assert!(flaky.paused);
    assert_eq!(
        flaky.last_outcome.as_deref(),
        Some("failed: the model is unavailable")
    );
    // Paused, it does not fire.
    let seen = token(b, "flaky");
    let claim = b
        .store
        .claim_schedule_fire(ws(), "flaky", seen, 9_000, &holder(), 60_000);
    assert_eq!(claim.unwrap(), None);
    // Resumed, it fires again with its failures forgotten.
    b.store.pause_schedule(ws(), "flaky", false).unwrap();
    assert_eq!(b.other().schedule(ws(), "flaky").unwrap().failures, 0);
    let claim = b
        .store
        .claim_schedule_fire(ws(), "flaky", seen, 9_000, &holder(), 60_000)
        .unwrap()
        .expect("a fire once resumed");
    let ended = b
        .store
        .end_schedule_fire(ws(), "flaky", claim.token, &failed, 3);
    assert_eq!(ended.unwrap().failures, 1);
}

fn an_overdue_spell_is_marked_once_and_a_fire_ends_it(b: &Backend) {
    b.store.add_schedule(&new("late")).unwrap();
    let added = token(b, "late");
    assert!(
        b.store
            .mark_schedule_overdue(ws(), "late", added, 5_000)
            .unwrap()
    );
    assert!(
        !b.other()
            .mark_schedule_overdue(ws(), "late", added, 6_000)
            .unwrap()
    );
    assert_eq!(
        b.other().schedule(ws(), "late").unwrap().overdue_at_ms,
        Some(5_000)
    );
    // A stale reading marks nothing.
    assert!(
        !b.other()
            .mark_schedule_overdue(ws(), "late", added - 1, 6_000)
            .unwrap()
    );
    let claim = b
        .store
        .claim_schedule_fire(ws(), "late", added, 7_000, &holder(), 60_000)
        .unwrap()
        .expect("a fire");
    assert_eq!(
        b.other().schedule(ws(), "late").unwrap().overdue_at_ms,
        None
    );
    assert!(
        !b.store
            .mark_schedule_overdue(ws(), "late", added, 9_000)
            .unwrap(),
        "read before the fire"
    );
    assert!(
        b.store
            .mark_schedule_overdue(ws(), "late", claim.token, 9_000)
            .unwrap(),
        "a new spell"
    );
}

fn racing_schedulers_claim_one_fire_once(b: &Backend) {
    b.store.add_schedule(&new("race")).unwrap();
    let seen = token(b, "race");
    let won: Vec<Option<i64>> = std::thread::scope(|s| {
        let racers: Vec<_> = (0..6)
            .map(|_| {
                let store = b.other();
                s.spawn(move || {
                    store
                        .claim_schedule_fire(ws(), "race", seen, 1_000, &holder(), 60_000)
                        .unwrap()
                        .map(|c| c.token)
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let winners: Vec<i64> = won.into_iter().flatten().collect();
    assert_eq!(winners, [token(b, "race")], "one fire, once");
}

fn a_schedule_added_again_under_its_name_refuses_the_removed_ones_tokens(b: &Backend) {
    b.store.add_schedule(&new("nightly")).unwrap();
    let read_before = token(b, "nightly");
    let old = b
        .store
        .claim_schedule_fire(ws(), "nightly", read_before, 1_000, &holder(), 60_000)
        .unwrap()
        .expect("the removed one's fire");
    // Removed while its run goes on, then added again under its name.
    assert!(b.store.remove_schedule(ws(), "nightly").unwrap());
    assert!(b.store.add_schedule(&new("nightly")).unwrap());
    let added = token(b, "nightly");
    assert_ne!(added, old.token);
    assert_ne!(added, read_before);
    // A scheduler's reading of the removed one claims nothing of the new one.
    let stale =
        b.other()
            .claim_schedule_fire(ws(), "nightly", read_before, 2_000, &holder(), 60_000);
    assert_eq!(
        stale.unwrap(),
        None,
        "claimed on a reading of the removed one"
    );
    let stale = b
        .other()
        .claim_schedule_fire(ws(), "nightly", old.token, 2_000, &holder(), 60_000);
    assert_eq!(
        stale.unwrap(),
        None,
        "claimed on a reading of the removed one"
    );
    let new_fire = b
        .store
        .claim_schedule_fire(ws(), "nightly", added, 3_000, &holder(), 60_000)
        .unwrap()
        .expect("the new one's first fire");
    assert_ne!(new_fire.token, old.token, "a token handed out twice");
    let before = b.other().schedule(ws(), "nightly").unwrap();

    // The removed one's fire can neither renew nor end the new one's.
    let renewed = b
        .other()
        .renew_schedule_fire(ws(), "nightly", old.token, 600_000);
    assert!(
        matches!(
            renewed,
            Err(StoreError::LeaseLost {
                lapse: Lapse::TakenOver,
                ..
            })
        ),
        "{renewed:?}"
    );
    let end = FireEnd {
        run: None,
        outcome: "failed: the removed schedule's run".into(),
        done: false,
    };
    let ended = b
        .other()
        .end_schedule_fire(ws(), "nightly", old.token, &end, 1);
    assert!(
        matches!(
            ended,
            Err(StoreError::LeaseLost {
                lapse: Lapse::TakenOver,
                ..
            })
        ),
        "{ended:?}"
    );
    assert!(
        !b.other()
            .mark_schedule_overdue(ws(), "nightly", read_before, 4_000)
            .unwrap(),
        "marked on a reading of the removed one"
    );
    let after = b.other().schedule(ws(), "nightly").unwrap();
    assert_eq!(after, before, "the new one's row changed");
    assert!(after.firing(tether_store::now_ms()), "its lease cleared");
    // The new fire's own token still holds it.
    let ended = b
        .store
        .end_schedule_fire(ws(), "nightly", new_fire.token, &end, 3)
        .unwrap();
    assert_eq!((ended.failures, ended.paused_now), (1, false));
}

fn the_time_a_paused_schedule_was_resumed_is_kept(b: &Backend) {
    b.store.add_schedule(&new("weekly")).unwrap();
    assert_eq!(
        b.other().schedule(ws(), "weekly").unwrap().resumed_at_ms,
        None
    );
    // Resuming a schedule that is not paused resumes nothing.
    assert!(b.store.pause_schedule(ws(), "weekly", false).unwrap());
    assert_eq!(
        b.other().schedule(ws(), "weekly").unwrap().resumed_at_ms,
        None
    );
    assert!(b.store.pause_schedule(ws(), "weekly", true).unwrap());
    let before = tether_store::now_ms();
    assert!(b.store.pause_schedule(ws(), "weekly", false).unwrap());
    let resumed = b.other().schedule(ws(), "weekly").unwrap().resumed_at_ms;
    let resumed = resumed.expect("the time it was resumed");
    assert!(
        resumed >= before && resumed <= tether_store::now_ms(),
        "{resumed}"
    );
    // Paused again, it keeps the last resume's time until the next.
    assert!(b.store.pause_schedule(ws(), "weekly", true).unwrap());
    assert_eq!(
        b.other().schedule(ws(), "weekly").unwrap().resumed_at_ms,
        Some(resumed)
    );
}

fn a_fire_records_its_run_when_it_starts_and_a_lapsed_one_is_abandoned_once(b: &Backend) {
    b.store.add_schedule(&new("nightly")).unwrap();
    let claim = b
        .store
        .claim_schedule_fire(
            ws(),
            "nightly",
            token(b, "nightly"),
            1_000,
            &holder(),
            60_000,
        )
        .unwrap()
        .expect("a fire");
    let ran = run(&b.store);
    // Only the fire's own token records its run.
    let stale = b
        .other()
        .start_schedule_fire(ws(), "nightly", claim.token - 1, &ran);
    assert!(
        matches!(stale, Err(StoreError::LeaseLost { .. })),
        "{stale:?}"
    );
    assert_eq!(b.other().schedule(ws(), "nightly").unwrap().last_run, None);
    b.store
        .start_schedule_fire(ws(), "nightly", claim.token, &ran)
        .unwrap();
    let going = b.other().schedule(ws(), "nightly").unwrap();
    assert_eq!(going.last_run.as_ref(), Some(&ran));
    assert_eq!(going.last_outcome, None, "it goes on");

    // A live fire is not abandoned.
    let abandon = |seen: i64, run: Option<&tether_store::RunId>| {
        b.other()
            .abandon_schedule_fire(
                ws(),
                "nightly",
                seen,
                run,
                "abandoned: its scheduler stopped",
            )
            .unwrap()
    };
    assert!(!abandon(claim.token, Some(&ran)), "abandoned while live");
    // Lapsed (its scheduler was killed), it is abandoned once, on a reading that is current.
    b.store
        .renew_schedule_fire(ws(), "nightly", claim.token, -1)
        .unwrap();
    assert!(!abandon(claim.token - 1, Some(&ran)), "a stale reading");
    assert!(
        !abandon(claim.token, None),
        "read before its run was recorded"
    );
    assert!(abandon(claim.token, Some(&ran)));
    assert!(!abandon(claim.token, Some(&ran)), "abandoned twice");
    let abandoned = b.other().schedule(ws(), "nightly").unwrap();
    assert_eq!(
        abandoned.last_outcome.as_deref(),
        Some("abandoned: its scheduler stopped")
    );
    assert_eq!(abandoned.last_run.as_ref(), Some(&ran));
    assert_eq!((abandoned.expires_at_ms, abandoned.failures), (0, 0));
    // Its scheduler, back, can neither renew it nor end it; the schedule fires again.
    let late = b
        .store
        .renew_schedule_fire(ws(), "nightly", claim.token, 60_000);
    assert!(
        matches!(late, Err(StoreError::LeaseLost { .. })),
        "{late:?}"
    );
    let next = b
        .store
        .claim_schedule_fire(ws(), "nightly", claim.token, 2_000, &holder(), 60_000);
    assert!(next.unwrap().is_some(), "fires again");
}
