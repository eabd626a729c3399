//! What a configuration is made of, besides the keys: the file's text, which file it is, and
//! every variable that configures (`TETHER_CONFIG`, `TETHER_STORE_URL`, the declared overrides,
//! `HOME` for the sandbox's `~`) with the value it had. Parsing a [`Source`] again gives the
//! configuration it was read as, whatever the file and those variables say by then: a run
//! records its source when it starts (see [`crate::Recorded`]) and every later use of its
//! configuration is parsed from that record.
//!
//! Which variables configure is not listed anywhere: reading a configuration through
//! [`Recording`] notes each variable the schema consults with [`Env::var`]; keys are read with
//! [`Env::key`], never noted, and come from the process's environment each time
//! ([`Replay`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::env::Env;

/// Everything a configuration is read from except the keys, and the schema it is read
/// against. The default is nothing read, against the core tables: a configuration held in
/// memory (a run's, as a command its agent handed over gets it).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// The file read (or looked for, when there is none).
    pub file: PathBuf,
    /// Whether the file exists; without it the configuration is the defaults (and the
    /// environment).
    pub found: bool,
    /// The file's text (empty without one).
    pub text: String,
    /// Every variable the reading consulted, by name, with its value then (`None`: unset).
    pub vars: BTreeMap<String, Option<String>>,
    /// The tables and keys it is read against (which keys are credentials, in what order its
    /// changes are said).
    pub schema: crate::Schema,
}

impl Source {
    /// The configuration this source says, its keys read from `keys` (the variables that
    /// configure are this source's, whatever `keys` holds), with its warnings.
    pub fn parse(&self, keys: &dyn Env) -> crate::Parsed {
        let replay = Replay { source: self, keys };
        crate::load::parse_with_warnings(&self.schema, &self.text, &self.file, &replay)
    }
}

impl std::fmt::Debug for Source {
    /// The file and the variables' names: the text and values may hold a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("file", &self.file)
            .field("found", &self.found)
            .field("vars", &self.vars.keys().collect::<Vec<_>>())
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// An environment that notes every variable read from it with [`Env::var`].
pub(crate) struct Recording<'a> {
    env: &'a dyn Env,
    read: RefCell<BTreeMap<String, Option<String>>>,
}

impl<'a> Recording<'a> {
    pub(crate) fn new(env: &'a dyn Env) -> Self {
        Recording {
            env,
            read: RefCell::default(),
        }
    }

    /// The variables read, with their values.
    pub(crate) fn into_read(self) -> BTreeMap<String, Option<String>> {
        self.read.into_inner()
    }
}

impl Env for Recording<'_> {
    fn var(&self, name: &str) -> Option<String> {
        let value = self.env.var(name);
        self.read
            .borrow_mut()
            .insert(name.to_owned(), value.clone());
        value
    }

    fn key(&self, name: &str) -> Option<String> {
        self.env.key(name)
    }
}

/// A source's variables, and the keys from another environment.
struct Replay<'a> {
    source: &'a Source,
    keys: &'a dyn Env,
}

impl Env for Replay<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.source.vars.get(name).cloned().flatten()
    }

    fn key(&self, name: &str) -> Option<String> {
        self.keys.key(name)
    }
}
