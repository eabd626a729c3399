//! The process environment, behind a trait.
//!
//! The environment overrides `tether.toml` (`TETHER_CONFIG`, `TETHER_STORE_URL`, the variables
//! a declared table's keys are overridden by, API keys), but the
//! loading logic never calls `std::env` itself: callers pass an [`Env`]. Tests hand in a
//! [`MapEnv`] instead of mutating the real environment, which would race between threads.

use std::collections::HashMap;

/// A source of environment variables.
///
/// Two kinds of variable are read: those that configure (`TETHER_CONFIG`, `TETHER_STORE_URL`,
/// the overrides a declared table's keys name, `HOME`), read with [`Env::var`] and recorded
/// with a run's configuration (see [`crate::Source`]); and keys, named by the `*_env`
/// settings, read with [`Env::key`] whenever they are needed and never recorded.
pub trait Env {
    /// The value of the variable `name`, or `None` when it is unset or not valid Unicode.
    fn var(&self, name: &str) -> Option<String>;

    /// The value of the variable `name` read as a key (a model's, a bot's): by default
    /// [`Env::var`]. An environment that replays a recorded configuration answers keys from
    /// the process's environment.
    fn key(&self, name: &str) -> Option<String> {
        self.var(name)
    }
}

/// The real process environment, with the keys [`keep_secrets`] took out of it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        kept_secret(name).or_else(|| std::env::var(name).ok())
    }
}

/// The keys taken out of the process's environment at start, by name.
static KEPT: std::sync::OnceLock<HashMap<String, String>> = std::sync::OnceLock::new();

/// Keeps the keys taken out of the process's environment (once, at start) for
/// [`ProcessEnv`] to read; a second call is ignored.
pub fn keep_secrets(taken: Vec<(String, String)>) {
    let _ = KEPT.set(taken.into_iter().collect());
}

/// A key taken out of the process's environment at start.
pub fn kept_secret(name: &str) -> Option<String> {
    KEPT.get()?.get(name).cloned()
}

impl Env for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

/// An in-memory environment, for tests and for embedding tether.
///
/// Its `Debug` prints variable names only, since values may be API keys.
#[derive(Clone, Default)]
pub struct MapEnv {
    vars: HashMap<String, String>,
}

impl MapEnv {
    /// An environment with no variables set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns this environment with `name` set to `value`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(name.into(), value.into());
    }
}

impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
}

impl std::fmt::Debug for MapEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.vars.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_struct("MapEnv").field("names", &names).finish()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for MapEnv {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self {
            vars: iter
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }
}

/// The value of `name`, treating a variable set to only whitespace like an unset one.
pub(crate) fn non_empty(env: &dyn Env, name: &str) -> Option<String> {
    env.var(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The key held in the variable `name` (see [`Env::key`]), a blank one as unset.
pub(crate) fn non_empty_key(env: &dyn Env, name: &str) -> Option<String> {
    env.key(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}
