//! The schema: applied once, re-applied harmlessly, and refused when newer than this build.

use tether_store_pg::{PgStore, PgStoreError, SCHEMA_VERSION};

use super::common::{config, raw, store};

#[tokio::test]
async fn a_fresh_database_gets_the_current_schema() {
    let (store, db) = store().await;
    assert_eq!(store.schema_version().await.unwrap(), SCHEMA_VERSION);
    let tables: Vec<String> = raw(&db)
        .await
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'public' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        tables,
        [
            "cancellations",
            "contract_approvals",
            "events",
            "fleet_goals",
            "fleets",
            "iterations",
            "question_posts",
            "questions",
            "run_leases",
            "runs",
            "schedules",
            "signoffs_running",
            "tether_schema",
            "topic_counters",
            "verdicts",
        ]
    );
}

#[tokio::test]
async fn connecting_again_and_at_once_migrates_once() {
    let (_store, db) = store().await;
    let again = (0..4).map(|_| PgStore::connect(config(&db)));
    for store in futures_join(again).await {
        assert_eq!(
            store.unwrap().schema_version().await.unwrap(),
            SCHEMA_VERSION
        );
    }
    let rows = raw(&db)
        .await
        .query("SELECT version FROM tether_schema", &[])
        .await
        .unwrap();
    // One row per migration: none applied twice.
    assert_eq!(rows.len(), usize::try_from(SCHEMA_VERSION).unwrap());
}

#[tokio::test]
async fn a_schema_from_a_newer_tether_is_refused() {
    let (_store, db) = store().await;
    raw(&db)
        .await
        .execute("INSERT INTO tether_schema (version) VALUES (99)", &[])
        .await
        .unwrap();
    let err = PgStore::connect(config(&db)).await.unwrap_err();
    assert!(
        matches!(err, PgStoreError::TooNew { found: 99, supported } if supported == SCHEMA_VERSION),
        "{err:?}"
    );
    assert!(err.to_string().contains("upgrade tether"), "{err}");
}

#[tokio::test]
async fn an_unreachable_server_is_named_without_the_password() {
    let (_store, db) = store().await;
    let closed = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut config = tether_store_pg::Config::new();
    config
        .host(&db.host)
        .port(port)
        .user(&db.user)
        .dbname(&db.dbname);
    config.password("hunter2-secret");
    let err = PgStore::connect(config).await.unwrap_err();
    assert!(matches!(err, PgStoreError::Unreachable { .. }), "{err:?}");
    let shown = format!("{err} {err:?}");
    assert!(
        shown.contains(&format!("127.0.0.1:{port}/{}", db.dbname)),
        "{shown}"
    );
    assert!(!shown.contains("hunter2"), "{shown}");
}

/// Runs the futures concurrently and returns their outputs in order.
async fn futures_join<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let tasks: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}
