//! One suite, both backends: every operation of the store interface (`tether_store::Store`)
//! behaves the same on the embedded SQLite store and on the team store (PostgreSQL). Each
//! scenario is written once against `Store` and runs as two tests, `<scenario>::embedded` and
//! `<scenario>::team`, so a failure names the backend.

mod fleet_claims;
mod fleets;
mod journal;
mod leases;
mod questions;
mod schedules;
mod signoff;
mod usage_events;

use tether_store::{Connector, EmbeddedFile, NewQuestion, RunId, RunKind, Store, StoreOptions};
use tether_store_pg::TeamStore;
use tether_testkit::postgres::{self, TestDatabase};

/// A store to test, and a way to open another handle on the same data (as another process
/// would).
pub struct Backend {
    pub store: Store,
    connector: Box<dyn Connector>,
    _dir: tempfile::TempDir,
    _db: Option<TestDatabase>,
}

impl Backend {
    /// Another handle on the same store.
    pub fn other(&self) -> Store {
        self.connector.connect().unwrap()
    }
}

/// The embedded store in a fresh workspace file.
pub fn embedded() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".tether/tether.db");
    let store = Store::open_with(&path, &StoreOptions::default()).unwrap();
    Backend {
        store,
        connector: Box::new(EmbeddedFile(path)),
        _dir: dir,
        _db: None,
    }
}

/// The team store on a fresh PostgreSQL database.
pub fn team() -> Backend {
    let db = postgres::database().expect("PostgreSQL for the tests (run ./test.sh)");
    let team = TeamStore::connect(db.url().parse().unwrap()).unwrap();
    let origin = tether_store::Origin::local(std::path::Path::new("/work"));
    let team = team.scoped(&origin);
    Backend {
        store: team.connect().unwrap(),
        connector: Box::new(team),
        _dir: tempfile::tempdir().unwrap(),
        _db: Some(db),
    }
}

/// A Ralph run in `/work`.
pub fn run(store: &Store) -> RunId {
    let spec = serde_json::json!({"prompt": "make the tests pass", "max_iterations": 5});
    store
        .create_run(RunKind::Ralph, "/work".as_ref(), &spec)
        .unwrap()
}

/// A question for `run` (or for no run).
pub fn question(run: Option<&RunId>, text: &str, options: &[&str]) -> NewQuestion {
    NewQuestion {
        run_id: run.cloned(),
        question: text.into(),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
        ..NewQuestion::default()
    }
}

/// One `#[test]` per backend for each scenario: `<scenario>::embedded`, `<scenario>::team`.
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[test]
                fn embedded() {
                    super::$scenario(&$crate::suite::embedded());
                }

                #[test]
                fn team() {
                    super::$scenario(&$crate::suite::team());
                }
            }
        )*
    };
}
pub(crate) use on_both_backends;
