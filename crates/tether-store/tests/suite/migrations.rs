//! Opening, migrating and refusing databases.

use std::sync::{Arc, Barrier};

use rusqlite::Connection;
use tether_store::{SCHEMA_VERSION, Store, StoreError};

use super::common::{ralph_run, temp_db};

#[test]
fn a_fresh_database_is_created_with_its_directory_in_wal_mode_at_the_latest_version() {
    let (_dir, db) = temp_db();
    let store = Store::open(&db).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(db.exists());
    let raw = Connection::open(&db).unwrap();
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn reopening_is_a_no_op_that_keeps_the_data() {
    let (_dir, db) = temp_db();
    let run = {
        let store = Store::open(&db).unwrap();
        ralph_run(&store)
    };
    let store = Store::open(&db).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.run(&run).unwrap().id, run);
}

#[test]
fn a_database_from_a_newer_tether_is_refused_untouched() {
    let (_dir, db) = temp_db();
    drop(Store::open(&db).unwrap());
    let newer = SCHEMA_VERSION + 1;
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    match Store::open(&db) {
        Err(StoreError::TooNew { found, supported }) => {
            assert_eq!((found, supported), (newer, SCHEMA_VERSION));
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    let version: i64 = Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, newer);
}

#[test]
fn a_file_that_is_not_a_database_is_reported_as_corrupt() {
    let (_dir, db) = temp_db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, vec![b'x'; 4096]).unwrap();
    match Store::open(&db) {
        Err(StoreError::Corrupt { .. }) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn the_journal_refuses_update_and_delete() {
    let (_dir, db) = temp_db();
    let store = Store::open(&db).unwrap();
    let run = ralph_run(&store);
    let raw = Connection::open(&db).unwrap();
    let update = raw
        .execute("UPDATE events SET kind = 'forged'", [])
        .unwrap_err();
    assert!(update.to_string().contains("append-only"), "{update}");
    let delete = raw.execute("DELETE FROM events", []).unwrap_err();
    assert!(delete.to_string().contains("append-only"), "{delete}");
    assert_eq!(
        store
            .events(&run, tether_store::Seq::START, 10)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn several_connections_opening_a_fresh_file_at_once_all_succeed() {
    // Switching a fresh file to WAL races between openers; repeat to make a regression likely
    // to show up in a single run.
    for _ in 0..5 {
        let (_dir, db) = temp_db();
        let barrier = Arc::new(Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let db = db.clone();
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&db).and_then(|store| store.schema_version())
                })
            })
            .collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap().unwrap(), SCHEMA_VERSION);
        }
    }
}
