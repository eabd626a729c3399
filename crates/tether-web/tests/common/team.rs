//! A store that says it is a team's database: the embedded store in a file outside the served
//! workspace, reporting [`BackendKind::Team`], so the dashboard has no local file to watch and
//! only the outside wake-up (or its slow re-read) tells it of new events.

use std::path::PathBuf;

use tether_store::{BackendKind, Connector, Store, StoreBackend};

/// Opens [`TeamLike`] stores over the file at its path.
#[derive(Debug, Clone)]
pub struct TeamLike(pub PathBuf);

impl Connector for TeamLike {
    fn connect(&self) -> tether_store::Result<Store> {
        Ok(Store::from_backend(Box::new(Backend(Store::open(
            &self.0,
        )?))))
    }

    fn describe(&self) -> String {
        format!("team-like store at {}", self.0.display())
    }
}

/// Every operation passed to an embedded store; only the kind differs.
#[derive(Debug)]
struct Backend(Store);

macro_rules! delegate {
    ($( $(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        impl StoreBackend for Backend {
            fn kind(&self) -> BackendKind {
                BackendKind::Team
            }
            $( fn $name(&self $(, $arg: $ty)*) -> $ret { self.0.$name($($arg),*) } )*
        }
    };
}

tether_store::with_store_operations!(delegate);
