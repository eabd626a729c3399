#![allow(clippy::unwrap_used)]

use super::*;
use crate::vocab::VerdictKind;

#[test]
fn migrations_are_numbered_from_one_without_gaps_and_end_at_the_schema_version() {
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let expected = i64::try_from(index + 1).unwrap();
        assert_eq!(migration.version, expected, "{}", migration.name);
        assert!(
            migration.name.starts_with(&format!("{expected:04}_")),
            "{} should start with its version",
            migration.name
        );
    }
    assert_eq!(MIGRATIONS.last().map(|m| m.version), Some(SCHEMA_VERSION));
}

#[test]
fn verdicts_recorded_before_version_2_get_the_kind_the_loop_used_to_derive() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tether.db");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(MIGRATIONS[0].sql).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        let rows = [
            ("accept", "looks done", Some("judge")),
            ("reject", "verify failed: `make` exited 1", None),
            ("reject", "judge unavailable: timed out", Some("judge")),
            ("reject", "the judge found no test", Some("judge")),
            ("accept", "verify passed; signed off without a judge", None),
        ];
        for (attempt, (verdict, reason, judge)) in rows.iter().enumerate() {
            conn.execute(
                "INSERT INTO verdicts (goal_id, plan_path, attempt, verdict, reason, \
                 judge_model, created_at_ms) VALUES ('g', 'plan.md', ?1, ?2, ?3, ?4, 0)",
                rusqlite::params![i64::try_from(attempt).unwrap() + 1, verdict, reason, judge],
            )
            .unwrap();
        }
    }
    let store = crate::Store::open(&db).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let kinds: Vec<VerdictKind> = store
        .verdicts_for_goal("plan.md", "g")
        .unwrap()
        .into_iter()
        .map(|v| v.decision.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            VerdictKind::Accepted,
            VerdictKind::VerifyFailed,
            VerdictKind::JudgeUnavailable,
            VerdictKind::JudgeRejected,
            VerdictKind::Accepted,
        ]
    );
}

#[test]
fn attempts_numbered_twice_before_version_3_are_renumbered_and_stay_unique() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tether.db");
    {
        let conn = Connection::open(&db).unwrap();
        for m in &MIGRATIONS[..2] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 2).unwrap();
        // Two concurrent sign-offs both recorded "attempt 1", then one recorded attempt 2.
        for attempt in [1, 1, 2] {
            conn.execute(
                "INSERT INTO verdicts (goal_id, plan_path, attempt, verdict, reason, kind, \
                 created_at_ms) VALUES ('g', 'plan.md', ?1, 'reject', 'no', 'judge_rejected', 0)",
                [attempt],
            )
            .unwrap();
        }
    }
    let store = crate::Store::open(&db).unwrap();
    let attempts: Vec<u32> = store
        .verdicts_for_goal("plan.md", "g")
        .unwrap()
        .into_iter()
        .map(|v| v.decision.attempt)
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
    let conn = Connection::open(&db).unwrap();
    let again = conn.execute(
        "INSERT INTO verdicts (goal_id, plan_path, attempt, verdict, reason, kind, \
         created_at_ms) VALUES ('g', 'plan.md', 3, 'reject', 'no', 'judge_rejected', 0)",
        [],
    );
    assert!(again.is_err(), "an attempt number cannot repeat");
}

#[test]
fn approvals_recorded_before_version_6_read_back_without_terms() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tether.db");
    {
        let conn = Connection::open(&db).unwrap();
        for m in &MIGRATIONS[..5] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute(
            "INSERT INTO contract_approvals (plan_path, goal_id, contract_hash, approved_by, \
             approved_at_ms) VALUES ('plan.md', 'g', 'sha256:old', 'ana', 1)",
            [],
        )
        .unwrap();
    }
    let store = crate::Store::open(&db).unwrap();
    let old = store.approval("plan.md", "g").unwrap().unwrap();
    assert_eq!(
        (old.contract_hash.as_str(), old.terms),
        ("sha256:old", None)
    );
    let conn = Connection::open(&db).unwrap();
    let bad = conn.execute(
        "INSERT INTO contract_approvals (plan_path, goal_id, contract_hash, approved_by, \
         approved_at_ms, terms) VALUES ('plan.md', 'g', 'h', 'ana', 2, 'not json')",
        [],
    );
    assert!(bad.is_err(), "terms are JSON");
}

#[test]
fn the_index_of_usage_events_names_the_usage_kinds_and_their_query_reads_it() {
    let index = MIGRATIONS
        .iter()
        .find(|m| m.name == "0011_usage_events.sql")
        .unwrap();
    assert!(
        index.sql.contains(&format!(
            "WHERE kind IN ({});",
            crate::event::usage_kinds_sql()
        )),
        "{}",
        index.sql
    );
    let store = crate::store::Sqlite::open_in_memory().unwrap();
    let plan: Vec<String> = store
        .conn
        .prepare(&format!(
            "EXPLAIN QUERY PLAN {}",
            crate::journal::usage_events_sql()
        ))
        .unwrap()
        .query_map(rusqlite::params!["r-1", i64::MAX, 10], |row| row.get(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        plan,
        ["SEARCH events USING INDEX events_usage_by_run (run_id=? AND seq<?)"]
    );
}

#[test]
fn schedules_from_before_version_12_keep_their_tokens_and_new_ones_come_above_any_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tether.db");
    {
        let conn = Connection::open(&db).unwrap();
        for m in &MIGRATIONS[..11] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 11).unwrap();
        conn.execute(
            "INSERT INTO schedules (workspace, name, timing, work, created_at_ms, fire) \
             VALUES ('/work', 'nightly', 'every 60s', '{}', 1, 7)",
            [],
        )
        .unwrap();
    }
    let store = crate::Store::open(&db).unwrap();
    let path = std::path::Path::new("/work");
    assert_eq!(store.schedule(path, "nightly").unwrap().fire, 7);
    let holder = crate::Holder::this_process(path);
    let claim = store
        .claim_schedule_fire(path, "nightly", 7, 2, &holder, 60_000)
        .unwrap()
        .unwrap();
    // Above any count a schedule removed before the migration could have reached.
    assert_eq!(claim.token, 7 + (1 << 32) + 1);
}
