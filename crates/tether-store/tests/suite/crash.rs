//! `kill -9` in the middle of writing loses nothing that was acknowledged.
//!
//! A child appends events as fast as it can and prints each seq only after the commit returned.
//! The parent kills it with SIGKILL after 200 acknowledgements, mid-write, then opens the store:
//! it must open, pass SQLite's integrity check, contain every acknowledged seq, and have a
//! projection that still matches its journal.

use std::collections::BTreeSet;

use tether_store::{Event, RunId, Seq, Store};

use super::common::{ChildTest, assert_projection_matches_journal, child_env, ralph_run, temp_db};

const DB: &str = "TETHER_STORE_CRASH_DB";
const RUN: &str = "TETHER_STORE_CRASH_RUN";
const CHILD_TEST: &str = "suite::crash::child_appends_until_killed";
const ACKS_BEFORE_KILL: usize = 200;
/// A bound so an orphaned child cannot run forever.
const MAX_ITERATIONS: u32 = 200_000;

/// Child side: does nothing unless started by the parent test below.
#[test]
fn child_appends_until_killed() {
    let (Some(db), Some(run)) = (child_env(DB), child_env(RUN)) else {
        return;
    };
    let run: RunId = run.parse().unwrap();
    let store = Store::open(&db).unwrap();
    for n in 1..=MAX_ITERATIONS {
        let mut seqs = vec![
            store
                .append(Some(&run), &Event::IterationStarted { n })
                .unwrap(),
        ];
        seqs.extend(
            store
                .append_all(
                    Some(&run),
                    &[
                        Event::ToolCalled {
                            n,
                            tool: "bash".into(),
                            summary: "cargo test".into(),
                        },
                        Event::MessageQueued {
                            text: format!("note {n}"),
                            by: "child".into(),
                            author: tether_store::Author::Person,
                        },
                        Event::IterationCompleted {
                            n,
                            summary: format!("iteration {n}"),
                        },
                    ],
                )
                .unwrap(),
        );
        for seq in seqs {
            println!(" tether-seq={seq} ");
        }
    }
}

#[test]
fn sigkill_mid_write_loses_no_acknowledged_event() {
    let (_dir, db) = temp_db();
    let run = {
        let store = Store::open(&db).unwrap();
        ralph_run(&store)
    };
    let run_text = run.to_string();
    let mut child = ChildTest::spawn(
        CHILD_TEST,
        &[(DB, db.as_os_str()), (RUN, run_text.as_ref())],
    );
    let mut acknowledged = child.read_seqs(ACKS_BEFORE_KILL);
    acknowledged.extend(child.kill_and_drain());

    let store = Store::open(&db).unwrap();
    store.check_integrity().unwrap();
    let present: BTreeSet<i64> = store
        .events(&run, Seq::START, usize::MAX)
        .unwrap()
        .iter()
        .map(|e| e.seq.0)
        .collect();
    let missing: Vec<i64> = acknowledged
        .iter()
        .copied()
        .filter(|seq| !present.contains(seq))
        .collect();
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");
    assert!(acknowledged.len() >= ACKS_BEFORE_KILL);
    assert_projection_matches_journal(&store, &run);

    // The store is usable afterwards and seqs keep growing.
    let next = store
        .append(
            Some(&run),
            &Event::Paused {
                reason: "after crash".into(),
            },
        )
        .unwrap();
    assert!(next.0 > *present.iter().max().unwrap());
    assert_projection_matches_journal(&store, &run);
}
