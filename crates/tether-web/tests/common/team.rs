//! A store that says it is a team's database: the embedded store in a file outside the served
//! workspace, reporting [`BackendKind::Team`], so the dashboard has no local file to watch and
//! only a wake-up (the outside one, or this store's feed of changes, poked by the test as a
//! team store's notifications would) or its slow re-read tells it of new events.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tether_store::{BackendKind, Change, Connector, Following, OnChange, Store, StoreBackend};

/// Opens [`TeamLike`] stores over the file at its path; their feeds of changes are poked with
/// [`TeamLike::poke`].
#[derive(Clone)]
pub struct TeamLike {
    path: PathBuf,
    followers: Arc<Mutex<Vec<OnChange>>>,
}

impl std::fmt::Debug for TeamLike {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TeamLike({})", self.path.display())
    }
}

impl TeamLike {
    pub fn new(path: PathBuf) -> TeamLike {
        TeamLike {
            path,
            followers: Arc::default(),
        }
    }

    /// Tells every follower that events were appended.
    pub fn poke(&self) {
        for f in self.followers.lock().unwrap().iter() {
            f(Change::Events(None));
        }
    }

    /// How many follow the stores' feed.
    pub fn followers(&self) -> usize {
        self.followers.lock().unwrap().len()
    }
}

impl Connector for TeamLike {
    fn connect(&self) -> tether_store::Result<Store> {
        Ok(Store::from_backend(Box::new(Backend {
            store: Store::open(&self.path)?,
            followers: Arc::clone(&self.followers),
        })))
    }

    fn describe(&self) -> String {
        format!("team-like store at {}", self.path.display())
    }
}

/// Every operation passed to an embedded store; the kind and the feed differ.
struct Backend {
    store: Store,
    followers: Arc<Mutex<Vec<OnChange>>>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Backend")
    }
}

macro_rules! delegate {
    ($( $(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        impl StoreBackend for Backend {
            fn kind(&self) -> BackendKind {
                BackendKind::Team
            }
            fn follow(&self, on_change: OnChange) -> Option<Following> {
                self.followers.lock().unwrap().push(on_change);
                Some(Following(Box::new(())))
            }
            $( fn $name(&self $(, $arg: $ty)*) -> $ret { self.store.$name($($arg),*) } )*
        }
    };
}

tether_store::with_store_operations!(delegate);
