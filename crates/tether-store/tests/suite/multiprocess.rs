//! Two real processes writing the same store at once.
//!
//! Each child appends its events one transaction at a time while the other does the same; the
//! `BEGIN IMMEDIATE` + busy-timeout design must serialise them without losing, duplicating or
//! mis-projecting anything.

use std::collections::BTreeSet;

use tether_store::{Event, RunId, Seq, Store};

use super::common::{ChildTest, assert_projection_matches_journal, child_env, ralph_run, temp_db};

const DB: &str = "TETHER_STORE_CHILD_DB";
const RUN: &str = "TETHER_STORE_CHILD_RUN";
const TAG: &str = "TETHER_STORE_CHILD_TAG";
const PER_CHILD: usize = 150;
const CHILD_TEST: &str = "suite::multiprocess::child_appends_events";

/// Child side: does nothing unless started by the parent test below.
#[test]
fn child_appends_events() {
    let (Some(db), Some(run), Some(tag)) = (child_env(DB), child_env(RUN), child_env(TAG)) else {
        return;
    };
    let run: RunId = run.parse().unwrap();
    let store = Store::open(&db).unwrap();
    println!(" tether-ready ");
    // Wait for the parent's go, so both children write at the same time.
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    for i in 0..PER_CHILD {
        let event = if i % 10 == 9 {
            Event::MessageDelivered { n: 1 }
        } else {
            Event::MessageQueued {
                text: format!("{tag}-{i}"),
                by: tag.clone(),
                author: tether_store::Author::Person,
            }
        };
        let seq = store.append(Some(&run), &event).unwrap();
        println!(" tether-seq={seq} ");
    }
    println!(" tether-done ");
}

#[test]
fn two_processes_append_concurrently_and_every_event_lands_once() {
    let (_dir, db) = temp_db();
    let store = Store::open(&db).unwrap();
    let run = ralph_run(&store);
    let run_text = run.to_string();

    let mut children: Vec<ChildTest> = ["a", "b"]
        .into_iter()
        .map(|tag| {
            ChildTest::spawn(
                CHILD_TEST,
                &[
                    (DB, db.as_os_str()),
                    (RUN, run_text.as_ref()),
                    (TAG, tag.as_ref()),
                ],
            )
        })
        .collect();
    for child in &children {
        child.read_until("tether-ready");
    }
    for child in &mut children {
        child.send("go");
    }
    let mut reported = Vec::new();
    for child in &children {
        let seqs = child.read_until("tether-done");
        assert_eq!(seqs.len(), PER_CHILD);
        reported.extend(seqs);
    }
    for child in children {
        child.wait_success();
    }

    let events = store.events(&run, Seq::START, usize::MAX).unwrap();
    assert_eq!(
        events.len(),
        1 + 2 * PER_CHILD,
        "run_started plus every child event"
    );
    let seqs: Vec<i64> = events.iter().map(|e| e.seq.0).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "seqs are unique and ordered"
    );
    let reported: BTreeSet<i64> = reported.into_iter().collect();
    assert_eq!(
        reported.len(),
        2 * PER_CHILD,
        "each child saw distinct seqs"
    );
    assert_eq!(reported, seqs[1..].iter().copied().collect());

    // Every queued message text is present exactly once.
    let texts: BTreeSet<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::MessageQueued { text, .. }) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts.len(), 2 * (PER_CHILD - PER_CHILD / 10));
    assert_projection_matches_journal(&store, &run);
    assert_eq!(
        store.run(&run).unwrap().last_event_seq.0,
        *seqs.last().unwrap()
    );
}
