//! A fresh database per test, and small helpers shared by the suites.

use std::time::Duration;

use tether_store::{NewQuestion, RunId, RunKind};
use tether_store_pg::{Config, PgStore};
use tether_testkit::postgres::{self, TestDatabase};

/// How long a test waits for something that should happen at once.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The connection settings for `db`.
pub fn config(db: &TestDatabase) -> Config {
    let mut config = Config::new();
    config
        .host(&db.host)
        .port(db.port)
        .user(&db.user)
        .dbname(&db.dbname)
        .connect_timeout(Duration::from_secs(10));
    config
}

/// A migrated store on a database of its own (keep the database alive as long as the store).
pub async fn store() -> (PgStore, TestDatabase) {
    let db = tokio::task::spawn_blocking(postgres::database)
        .await
        .unwrap()
        .expect("PostgreSQL for the tests (run ./test.sh)");
    let store = PgStore::connect(config(&db)).await.unwrap();
    (store, db)
}

/// A plain connection for SQL the store does not offer.
pub async fn raw(db: &TestDatabase) -> tokio_postgres::Client {
    let (client, connection) = config(db).connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// A Ralph run in `/work`.
pub async fn run(store: &PgStore) -> RunId {
    let spec = serde_json::json!({"prompt": "make the tests pass", "max_iterations": 5});
    store
        .create_run(RunKind::Ralph, "/work".as_ref(), &spec)
        .await
        .unwrap()
}

/// A plain question for `run`.
pub fn question(run: &RunId, text: &str) -> NewQuestion {
    NewQuestion {
        run_id: Some(run.clone()),
        question: text.into(),
        ..NewQuestion::default()
    }
}
