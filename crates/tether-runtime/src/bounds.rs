//! The settings that bound the agent in a run (see `tether_core::bounds`), as a run is taken
//! up: a new run records tether.toml's; a resumed run keeps its record, and takes tether.toml's
//! only when they differ and a person accepts them (the front end asks, and says the change).

use std::path::PathBuf;
use std::sync::Arc;

use tether_config::{Config, Workspace};
use tether_core::bounds::{Bounds, Change, Pinned};
use tether_store::Run;

use crate::Error;

/// What tether.toml says of the settings, read again at each iteration boundary.
type Reader = Arc<dyn Fn() -> Option<Bounds> + Send + Sync>;

/// A new run's: tether.toml's as loaded (`config`), recorded with the run.
pub fn for_new_run(ws: &Workspace, config: &Config) -> Pinned {
    let bounds = Bounds::of(config);
    Pinned {
        seen: bounds.clone(),
        bounds,
        accepted: false,
        read: reader(ws),
    }
}

/// A resumed run's settings, as tether.toml (`config`, as loaded) stands to its record.
pub enum Resumed {
    /// Nothing to decide: the record, tether.toml's being the same; or tether.toml's, for a
    /// run recorded before tether kept them (the person resuming it records the file's, as
    /// starting a run does).
    Settled(Pinned),
    /// tether.toml's differ from the run's record: a person decides.
    Changed(Changed),
}

/// tether.toml's settings differing from a resumed run's record.
pub struct Changed {
    /// What differs.
    pub changes: Vec<Change>,
    recorded: Bounds,
    now: Bounds,
    read: Reader,
    run: String,
}

impl Changed {
    /// A person accepted tether.toml's: the run keeps to them from now on.
    pub fn accept(self) -> Pinned {
        Pinned {
            bounds: self.now.clone(),
            seen: self.now,
            accepted: true,
            read: self.read,
        }
    }

    /// Nobody accepted them: the run keeps to its record, which `config` is made to hold;
    /// refused when a destination changed ([`Error::DestinationsChanged`]), which the record
    /// cannot hold back.
    pub fn keep(self, config: &mut Config) -> Result<Pinned, Error> {
        let unpinned = self.recorded.destination_changes(&self.now);
        if !unpinned.is_empty() {
            let names: Vec<&str> = unpinned.iter().map(|c| c.setting).collect();
            return Err(Error::DestinationsChanged {
                settings: names.join(", "),
                run: self.run,
            });
        }
        self.recorded.pin(config);
        Ok(Pinned {
            bounds: self.recorded,
            seen: self.now,
            accepted: false,
            read: self.read,
        })
    }
}

/// `run`'s settings as tether.toml (`config`) stands to its record.
pub fn for_resumed_run(ws: &Workspace, run: &Run, config: &Config) -> Resumed {
    let now = Bounds::of(config);
    let read = reader(ws);
    let Some(recorded) = Bounds::recorded(run) else {
        return Resumed::Settled(Pinned {
            seen: now.clone(),
            bounds: now,
            accepted: true,
            read,
        });
    };
    let changes = recorded.changes(&now);
    if changes.is_empty() {
        return Resumed::Settled(Pinned {
            seen: now,
            bounds: recorded,
            accepted: false,
            read,
        });
    }
    Resumed::Changed(Changed {
        changes,
        recorded,
        now,
        read,
        run: run.id.to_string(),
    })
}

/// What tether.toml says of the settings now (read as this process read it at its start, in
/// its own environment), read again at each iteration boundary.
fn reader(ws: &Workspace) -> Reader {
    let root: PathBuf = ws.root().to_owned();
    Arc::new(move || {
        tether_config::load(&root, &tether_config::ProcessEnv)
            .ok()
            .map(|loaded| Bounds::of(&loaded.config))
    })
}
