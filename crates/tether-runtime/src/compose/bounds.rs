//! A run's whole configuration (see `tether_core::bounds`) as a run is taken up: a new run
//! records the source of the configuration it was loaded with; a resumed run is parsed from
//! its record, and takes the file's only when a person saw how it differs and accepts it (the
//! front end shows the difference and asks; without a yes the resume is refused).

use std::path::PathBuf;
use std::sync::Arc;

use tether_config::{Change, Config, Env, Loaded, Recorded, Workspace};
use tether_core::bounds::{Pinned, Record, Reread};
use tether_store::{Run, RunId};

use crate::Error;

/// A new run's: the configuration as loaded (`loaded`), recorded with the run.
pub fn for_new_run(ws: &Workspace, loaded: &Loaded) -> Pinned {
    Pinned {
        recorded: Recorded::of(&loaded.input),
        accepted: false,
        seen: loaded.config.clone(),
        read: reader(ws),
    }
}

/// A resumed run's configuration, as the file (`now`, as loaded) stands to its record.
pub enum Resumed {
    /// The file says what the record says: the run goes on with the configuration parsed
    /// from its record.
    Settled(Box<Settled>),
    /// The file differs from the record (or the run was recorded by an older tether): a person
    /// decides.
    Changed(Box<Changed>),
}

/// A resumed run whose file says what its record says.
pub struct Settled {
    /// The record, kept.
    pub pinned: Pinned,
    /// The configuration parsed from it: what the run uses.
    pub config: Config,
}

/// A file differing from a resumed run's record.
pub struct Changed {
    /// How it differs, for people.
    pub changes: Vec<Change>,
    now: Loaded,
    read: Reread,
    run: RunId,
}

impl Changed {
    /// A person saw the difference and accepts the file's: the run keeps to it from now on
    /// (its `resumed` event records it). The configuration it uses is the file's, as loaded.
    pub fn accept(self) -> Settled {
        let pinned = Pinned {
            recorded: Recorded::of(&self.now.input),
            accepted: true,
            seen: self.now.config.clone(),
            read: self.read,
        };
        Settled {
            pinned,
            config: self.now.config,
        }
    }

    /// Nobody accepted it: the resume is refused, naming the differences.
    pub fn refuse(self) -> Error {
        let said: Vec<String> = self.changes.iter().map(ToString::to_string).collect();
        Error::ConfigChanged {
            changes: said.join("; "),
            run: self.run.to_string(),
        }
    }
}

/// `run`'s configuration as the file (`now`, as loaded) stands to its record; the keys are
/// read from `keys`.
pub fn for_resumed_run(ws: &Workspace, run: &Run, now: &Loaded, keys: &dyn Env) -> Resumed {
    let read = reader(ws);
    let record = Record::of(run);
    if let Record::Config(recorded) = &record
        && let Some(source) = recorded.restore(&now.input)
        && let Ok((config, _)) = source.parse(keys)
        && config == now.config
    {
        let pinned = Pinned {
            recorded: recorded.clone(),
            accepted: false,
            seen: config.clone(),
            read,
        };
        return Resumed::Settled(Box::new(Settled { pinned, config }));
    }
    let mut changes = record.changes(&now.input);
    if changes.is_empty() {
        // The same text and variables, read otherwise: a key's variable changed, or this
        // tether reads the record differently from the one that wrote it.
        changes.push(Change {
            setting: "the configuration".to_owned(),
            was: "as recorded".to_owned(),
            now: "read differently now".to_owned(),
        });
    }
    Resumed::Changed(Box::new(Changed {
        changes,
        now: now.clone(),
        read,
        run: run.id.clone(),
    }))
}

/// The configuration's file read again (as this process read it at its start, in its own
/// environment), at each iteration boundary.
fn reader(ws: &Workspace) -> Reread {
    let root: PathBuf = ws.root().to_owned();
    Arc::new(move || tether_config::load(crate::schema(), &root, &tether_config::ProcessEnv).ok())
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod tests;
