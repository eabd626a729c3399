//! The reading API a declared table's read function is given: typed reads of its keys, each
//! reporting a problem with its line and key instead of failing (as the core tables' walk
//! does), the environment's overrides a key declares applied, the variables of its secrets
//! resolved by tether-config, and what a listed channel lacks.
//!
//! A read function sees only its own table and reads only the keys its table declares: a key
//! it does not declare reads as absent, so a setting cannot be read without being in the
//! schema (its unknown-key check, its template line, its place in a run's record).

use crate::declare::{KeyKind, TableDecl};
use crate::env::{Env, non_empty, non_empty_key};
use crate::notify::NoticeKind;
use crate::reader::{Reader, Table, entry, path_of};
use crate::values::Check;
use crate::{Secret, values};

/// A declared table being read: present in the file or not (the environment may still
/// configure it).
pub struct TableReader<'s, 'a> {
    r: &'s mut Reader<'a>,
    table: Option<Table<'s, 's>>,
    decl: &'static TableDecl,
    env: &'s dyn Env,
    secrets: Vec<(&'static str, Option<String>)>,
    lacking: Vec<String>,
}

impl<'s, 'a> TableReader<'s, 'a> {
    /// Reads the variables `decl`'s secrets are named by, and checks the table's keys.
    pub(crate) fn new(
        r: &'s mut Reader<'a>,
        table: Option<Table<'s, 's>>,
        decl: &'static TableDecl,
        env: &'s dyn Env,
    ) -> Self {
        let mut secrets = Vec::new();
        for key in decl.keys {
            if let KeyKind::SecretVar { default } = key.kind {
                let named = table
                    .as_ref()
                    .and_then(|t| r.string(t, key.name, values::env_var_name));
                secrets.push((key.name, named.or(default.map(str::to_owned))));
            }
        }
        let mut reader = TableReader {
            r,
            table,
            decl,
            env,
            secrets,
            lacking: Vec::new(),
        };
        reader.unknown_keys();
        reader
    }

    /// Flags every key the table does not declare; one that looks like a credential is pointed
    /// to the variable of the secret its declaration names ([`TableDecl::advice`]).
    fn unknown_keys(&mut self) {
        let Some(table) = &self.table else { return };
        let allowed: Vec<&str> = self.decl.keys.iter().map(|k| k.name).collect();
        let advice = self.decl.advice.and_then(|key| {
            let decl = self.decl.key(key)?;
            let var = match self.secret_var(key) {
                Some(var) => var,
                None => decl.example.trim_matches('"').to_owned(),
            };
            let path = path_of(self.decl.name, key);
            Some(match decl.kind {
                KeyKind::SecretVar { default: Some(_) } => {
                    format!("set the environment variable {var} instead (named by `{path}`)")
                }
                _ => {
                    format!("set the environment variable {var} instead and name it with `{path}`")
                }
            })
        });
        self.r.unknown_keys(table, &allowed, advice.as_deref());
    }

    /// What the table lacks for its channel, and the settings read.
    pub(crate) fn finish(self) -> (Vec<(&'static str, Option<String>)>, Vec<String>) {
        (self.secrets, self.lacking)
    }

    /// The table when it reads `key`: `None` when the table is absent or does not declare it.
    fn declaring(&self, key: &str) -> Option<&Table<'s, 's>> {
        self.decl.key(key)?;
        self.table.as_ref()
    }

    /// The reader and the table, when the table is present and declares `key`.
    fn reading(&mut self, key: &str) -> Option<(&mut Reader<'a>, &Table<'s, 's>)> {
        self.decl.key(key)?;
        Some((&mut *self.r, self.table.as_ref()?))
    }

    /// Whether the file has the table.
    pub fn present(&self) -> bool {
        self.table.is_some()
    }

    /// Whether `key` is given at all: in the file (valid or not), or by the variable overriding
    /// it.
    pub fn given(&self, key: &str) -> bool {
        let in_file = self.declaring(key).is_some_and(|t| entry(t, key).is_some());
        let by_env = self
            .decl
            .key(key)
            .and_then(|k| k.env)
            .is_some_and(|var| non_empty(self.env, var).is_some());
        in_file || by_env
    }

    /// A string that passes `check`, the variable overriding it (when the key declares one)
    /// applied: a value of the variable that fails `check` is a problem naming the variable,
    /// and leaves the file's. For a key naming a secret's variable: the variable it names
    /// ([`TableReader::secret_var`]).
    pub fn string(&mut self, key: &str, check: Check) -> Option<String> {
        let decl = self.decl.key(key)?;
        if let KeyKind::SecretVar { .. } = decl.kind {
            return self.secret_var(key);
        }
        let mut value = match &self.table {
            Some(t) => self.r.string(t, key, check),
            None => None,
        };
        if let Some(var) = decl.env
            && let Some(from_env) = non_empty(self.env, var)
        {
            match check(&from_env) {
                Ok(()) => value = Some(from_env),
                Err(message) => {
                    let path = path_of(self.decl.name, key);
                    self.r.report(None, path, format!("from {var}: {message}"));
                }
            }
        }
        value
    }

    /// An integer in `min..=max`, converted to `T` (which must hold the whole range).
    pub fn int<T: TryFrom<i64>>(&mut self, key: &str, min: i64, max: i64) -> Option<T> {
        let (r, table) = self.reading(key)?;
        r.int(table, key, min, max)
    }

    /// A boolean.
    pub fn bool(&mut self, key: &str) -> Option<bool> {
        let (r, table) = self.reading(key)?;
        r.bool(table, key)
    }

    /// One of `choices`, by its spelling.
    pub fn choice<T: Copy>(&mut self, key: &str, choices: &[(&'static str, T)]) -> Option<T> {
        let (r, table) = self.reading(key)?;
        r.choice(table, key, choices)
    }

    /// A list of strings, each passing `check`; `None` if the list or any item is invalid.
    pub fn string_list(&mut self, key: &str, check: Check) -> Option<Vec<String>> {
        let (r, table) = self.reading(key)?;
        r.string_list(table, key, check)
    }

    /// A list of notices (a channel's own `notify = [...]`).
    pub fn notices(&mut self, key: &str) -> Option<Vec<NoticeKind>> {
        let (r, table) = self.reading(key)?;
        r.choice_list(table, key, &NoticeKind::CHOICES)
    }

    /// The NAME of the variable the secret `key` is read from: the file's, else the key's
    /// default; `None` when neither names one.
    pub fn secret_var(&self, key: &str) -> Option<String> {
        self.secrets
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, var)| var.clone())
    }

    /// The secret the variable named by `key` holds (read as a key: never recorded), a blank
    /// one as unset.
    pub fn secret(&self, key: &str) -> Option<Secret> {
        let var = self.secret_var(key)?;
        non_empty_key(self.env, &var).map(Secret::new)
    }

    /// Reports a problem of `key`, at its line when the file sets it.
    pub fn report(&mut self, key: &str, message: impl Into<String>) {
        let span = self
            .declaring(key)
            .and_then(|t| entry(t, key))
            .map(|(_, v)| v.span());
        self.r.report(span, path_of(self.decl.name, key), message);
    }

    /// Notes something the table's channel needs but was not given (`` `zulip.stream` (or
    /// ZULIP_STREAM) ``): when `human.channels` lists the channel, a warning names it.
    pub fn lacks(&mut self, what: impl Into<String>) {
        self.lacking.push(what.into());
    }
}
