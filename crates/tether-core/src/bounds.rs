//! The run's whole configuration is the person's: what configured a run when it started —
//! the text of tether.toml (or of the file `TETHER_CONFIG` names), which file, and every
//! variable that configures (`TETHER_CONFIG`, `TETHER_STORE_URL`, the chat overrides, `HOME`)
//! — is recorded with the run, and the run keeps to it.
//!
//! tether.toml lies in the tree the agent writes, and tether reads it again during a run (the
//! boundary's check below) and after it (a `tether resume`, the dashboard's Resume). So no
//! setting is taken from the file as it is now: a new run records its configuration's source
//! in its spec ([`tether_config::Recorded`], under [`SPEC_KEY`]: no credential in it, a salted
//! digest in each one's place); a resumed run is parsed from that record, or from the file
//! when a person accepts its difference (`tether resume --accept-config`, the dashboard's
//! Resume after it showed the difference; recorded in the `resumed` event); and a change of
//! the file while a run is driven pauses the run for a person ([`Pinned::changed`]). No list of
//! settings decides what is kept: every key of the schema is, and a comment or a blank line
//! changes nothing (the parsed configurations are compared). Keys — the values of the
//! variables the `*_env` settings name — are read from the environment by name each time.
//!
//! What a goal's contract says (`network:`, `budget:`, `ask_before:`) is the approved
//! contract's: see [`crate::planning::terms`].

use std::sync::Arc;

use tether_config::{Change, Config, Loaded, Recorded, Source};
use tether_store::{Run, RunId};

/// Where a run's spec holds the configuration recorded at its start.
pub const SPEC_KEY: &str = "config";

/// What a run's records say of its configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The configuration in force: the one a person last accepted on a resume, else the one
    /// recorded at its start.
    Config(Recorded),
    /// None this tether reads: the run was recorded by an older tether, which kept a list of
    /// some settings (or none), so a person accepts the file's before it is resumed.
    Older,
}

impl Record {
    /// What `run`'s records say.
    pub fn of(run: &Run) -> Record {
        let read = |v: &serde_json::Value| serde_json::from_value::<Recorded>(v.clone()).ok();
        let accepted = run.state.settings.as_ref().and_then(read);
        accepted
            .or_else(|| run.spec.get(SPEC_KEY).and_then(read))
            .map_or(Record::Older, Record::Config)
    }

    /// How `now` differs from the record, for people (all of it, as new, for an older run's).
    pub fn changes(&self, now: &Source) -> Vec<Change> {
        match self {
            Record::Config(recorded) => recorded.changes(now),
            Record::Older => Recorded::unrecorded(now),
        }
    }
}

/// How a configuration's file is read again: what `tether_config::load` says now (`None` when
/// it cannot be read or is not valid: then nothing of it is used, and nothing is said).
pub type Reread = Arc<dyn Fn() -> Option<Loaded> + Send + Sync>;

/// A run's configuration in one process: the record it keeps to, and how to tell that the
/// file changed while the run is driven.
#[derive(Clone)]
pub struct Pinned {
    /// The configuration the run keeps to, as recorded: at its start, or as a person accepted
    /// it on this resume.
    pub recorded: Recorded,
    /// Whether a person accepted `recorded` on this resume: the `resumed` event records it.
    pub accepted: bool,
    /// The configuration parsed from it, as this process took the run up.
    pub seen: Config,
    /// The file read again at each iteration boundary.
    pub read: Reread,
}

impl std::fmt::Debug for Pinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pinned")
            .field("recorded", &self.recorded.file)
            .field("accepted", &self.accepted)
            .finish_non_exhaustive()
    }
}

impl Pinned {
    /// The record as JSON, for the run's spec or its `resumed` event.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.recorded).unwrap_or_default()
    }

    /// What changed in the configuration since this process took the run up: the reason the
    /// run pauses for a person, or `None`. The parsed configurations are compared, so an edit
    /// that changes no setting (a comment, a blank line) is none.
    pub fn changed(&self, run: &RunId) -> Option<String> {
        let now = (self.read)()?;
        if now.config == self.seen {
            return None;
        }
        let mut said: Vec<String> = self
            .recorded
            .changes(&now.input)
            .iter()
            .map(ToString::to_string)
            .collect();
        if said.is_empty() {
            said.push("the configuration parsed from it differs".to_owned());
        }
        Some(format!(
            "tether.toml changed during the run ({}); the change is not applied: a person \
             resumes with `tether resume {run} --accept-config` to apply it, or puts tether.toml \
             back and resumes with `tether resume {run}`",
            said.join("; ")
        ))
    }
}
