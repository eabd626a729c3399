//! A configuration as a run records it: its [`Source`] with every credential out of it (see
//! `hidden.rs`: a salted digest in its place), so the record can be kept in the store and
//! shown, and parsed again — with the credentials the file and the environment still hold,
//! when their digests match ([`Recorded::restore`]). [`Recorded::changes`] says, for people,
//! how a source differs from the record: each key of the file and each variable, with its old
//! and new value (a credential's hidden), never a comment or a blank line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toml::de::{DeTable, DeValue};

use crate::Source;
use crate::hidden::{self, PLACEHOLDER};

/// A configuration's source as a run records it: no credential in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// The file read (or looked for).
    pub file: PathBuf,
    /// Whether the file existed.
    pub found: bool,
    /// Its text, each credential's value replaced by `"(hidden)"`.
    pub text: String,
    /// The variables that configure, with their values (a credential's `"(hidden)"`).
    #[serde(default)]
    pub vars: BTreeMap<String, Option<String>>,
    /// The salted digest of each credential, by where it is: a dotted key of the file
    /// (`webhook.url`) or `$` and a variable's name (`$TETHER_STORE_URL`).
    #[serde(default)]
    pub hidden: BTreeMap<String, String>,
    /// The salt of the digests.
    pub salt: String,
}

/// One setting that differs between a record and a source, for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The setting as tether.toml names it (`[sandbox] mode`, `plan`), `$NAME` for a
    /// variable, `file` for which file.
    pub setting: String,
    /// Its value in the record (`(absent)` when the file did not set it).
    pub was: String,
    /// Its value now.
    pub now: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} → {}", self.setting, self.was, self.now)
    }
}

/// How a key the file does not set is shown.
const ABSENT: &str = "(absent)";
/// How a value an older record does not hold is shown.
const UNRECORDED: &str = "(not recorded)";

impl Recorded {
    /// `source` as a record, its credentials digested with a new salt.
    pub fn of(source: &Source) -> Recorded {
        Recorded::salted(source, hidden::salt())
    }

    fn salted(source: &Source, salt: String) -> Recorded {
        let mut digests = BTreeMap::new();
        let mut edits = Vec::new();
        for found in hidden::in_text(&source.text, &source.schema) {
            let digest = hidden::digest(&salt, &found.at, &found.value);
            digests.insert(found.at, digest);
            edits.push((found.span, hidden::literal(PLACEHOLDER)));
        }
        let vars = source
            .vars
            .iter()
            .map(|(name, value)| match value {
                Some(v) if hidden::secret_var(name, v) => {
                    let at = var_place(name);
                    digests.insert(at.clone(), hidden::digest(&salt, &at, v));
                    (name.clone(), Some(PLACEHOLDER.to_owned()))
                }
                other => (name.clone(), other.clone()),
            })
            .collect();
        Recorded {
            file: source.file.clone(),
            found: source.found,
            text: hidden::replaced(&source.text, edits),
            vars,
            hidden: digests,
            salt,
        }
    }

    /// The source this records, its credentials taken from `now` (the file and the variables as
    /// they are) where their digests match; `None` when one is not there any more (then `now`
    /// differs from the record, and [`Recorded::changes`] says so).
    pub fn restore(&self, now: &Source) -> Option<Source> {
        let mut values: BTreeMap<String, String> = hidden::in_text(&now.text, &now.schema)
            .into_iter()
            .map(|found| (found.at, found.value))
            .collect();
        for (name, value) in &now.vars {
            if let Some(value) = value {
                values.insert(var_place(name), value.clone());
            }
        }
        let value_of = |at: &str| -> Option<String> {
            let value = values.get(at)?;
            let recorded = self.hidden.get(at)?;
            (hidden::digest(&self.salt, at, value) == *recorded).then(|| value.clone())
        };
        let mut edits = Vec::new();
        for placeholder in hidden::in_text(&self.text, &now.schema) {
            if self.hidden.contains_key(&placeholder.at) {
                edits.push((
                    placeholder.span,
                    hidden::literal(&value_of(&placeholder.at)?),
                ));
            }
        }
        let mut vars = self.vars.clone();
        for (name, value) in &mut vars {
            let at = var_place(name);
            if self.hidden.contains_key(&at) {
                *value = Some(value_of(&at)?);
            }
        }
        Some(Source {
            file: self.file.clone(),
            found: self.found,
            text: hidden::replaced(&self.text, edits),
            vars,
            schema: now.schema.clone(),
        })
    }

    /// How `now` differs from this record, in tether.toml's order: which file, each key of
    /// the file, each variable both read; a credential shown as `(hidden)`.
    pub fn changes(&self, now: &Source) -> Vec<Change> {
        let schema = &now.schema;
        let now = Recorded::salted(now, self.salt.clone());
        let mut out = Vec::new();
        if (&self.file, self.found) != (&now.file, now.found) {
            out.push(Change {
                setting: "file".to_owned(),
                was: self.file_shown(),
                now: now.file_shown(),
            });
        }
        let was_keys = flatten(&self.text);
        let now_keys = flatten(&now.text);
        let mut paths: Vec<&Vec<String>> = was_keys.keys().chain(now_keys.keys()).collect();
        paths.sort_by_key(|path| order(schema, path));
        paths.dedup();
        for path in paths {
            let at = path.join(".");
            let (was, then) = (was_keys.get(path), now_keys.get(path));
            let change = if self.hidden.contains_key(&at) || now.hidden.contains_key(&at) {
                hidden_change(self.hidden.get(&at), now.hidden.get(&at))
            } else {
                (was != then).then(|| {
                    let shown = |v: Option<&String>| v.map_or(ABSENT.to_owned(), Clone::clone);
                    (shown(was), shown(then))
                })
            };
            if let Some((was, now)) = change {
                out.push(Change {
                    setting: setting_name(path),
                    was,
                    now,
                });
            }
        }
        for (name, was) in &self.vars {
            let Some(then) = now.vars.get(name) else {
                continue;
            };
            let at = var_place(name);
            let change = if self.hidden.contains_key(&at) || now.hidden.contains_key(&at) {
                hidden_change(self.hidden.get(&at), now.hidden.get(&at))
            } else {
                (was != then).then(|| (var_shown(was.as_ref()), var_shown(then.as_ref())))
            };
            if let Some((was, now)) = change {
                out.push(Change {
                    setting: at,
                    was,
                    now,
                });
            }
        }
        out
    }

    /// `now` for a run whose record holds none of it (recorded by an older tether): which
    /// file, every key it sets and every variable with a value, each as new.
    pub fn unrecorded(now: &Source) -> Vec<Change> {
        let schema = &now.schema;
        let now = Recorded::salted(now, hidden::salt());
        let mut out = vec![Change {
            setting: "file".to_owned(),
            was: UNRECORDED.to_owned(),
            now: now.file_shown(),
        }];
        let mut keys: Vec<(Vec<String>, String)> = flatten(&now.text).into_iter().collect();
        keys.sort_by_key(|(path, _)| order(schema, path));
        let shown = |at: &str, value: String| match now.hidden.contains_key(at) {
            true => PLACEHOLDER.to_owned(),
            false => value,
        };
        out.extend(keys.into_iter().map(|(path, value)| Change {
            setting: setting_name(&path),
            was: UNRECORDED.to_owned(),
            now: shown(&path.join("."), value),
        }));
        out.extend(now.vars.iter().filter_map(|(name, value)| {
            value.as_ref().map(|v| Change {
                setting: var_place(name),
                was: UNRECORDED.to_owned(),
                now: shown(&var_place(name), var_shown(Some(v))),
            })
        }));
        out
    }

    fn file_shown(&self) -> String {
        match self.found {
            true => format!("{:?}", self.file.display().to_string()),
            false => format!("none ({} not found: the defaults)", self.file.display()),
        }
    }
}

/// Where a variable's credential is in [`Recorded::hidden`].
fn var_place(name: &str) -> String {
    format!("${name}")
}

fn var_shown(value: Option<&String>) -> String {
    value.map_or_else(|| "(unset)".to_owned(), |v| format!("{v:?}"))
}

/// A credential's change, seen through its digests: `None` when it is the same.
fn hidden_change(was: Option<&String>, now: Option<&String>) -> Option<(String, String)> {
    if was == now {
        return None;
    }
    let shown = |d: Option<&String>| d.map_or(ABSENT, |_| PLACEHOLDER).to_owned();
    let now_shown = match (was, now) {
        (Some(_), Some(_)) => "(hidden: another value)".to_owned(),
        _ => shown(now),
    };
    Some((shown(was), now_shown))
}

/// `[table] key` (`[executor] env.NAME` deeper down), or the key alone at the top level.
fn setting_name(path: &[String]) -> String {
    match path {
        [key] => key.clone(),
        [table, rest @ ..] => format!("[{table}] {}", rest.join(".")),
        [] => String::new(),
    }
}

/// Where a key comes in tether.toml's order: its table's place among the tables, its place in
/// the table, then its name; a key the schema does not know after the known ones.
fn order(schema: &crate::Schema, path: &[String]) -> (usize, usize, Vec<String>) {
    let top = path.first().map_or("", String::as_str);
    let (table, key) = schema.position(top, path.get(1).map(String::as_str));
    (table, key, path.to_vec())
}

/// Every value of a TOML text by its key path, rendered; empty when the text is not TOML.
fn flatten(text: &str) -> BTreeMap<Vec<String>, String> {
    let mut out = BTreeMap::new();
    if let Ok(doc) = DeTable::parse(text) {
        walk(doc.get_ref(), &mut Vec::new(), &mut out);
    }
    out
}

fn walk(table: &DeTable<'_>, path: &mut Vec<String>, out: &mut BTreeMap<Vec<String>, String>) {
    for (key, value) in table {
        path.push(key.get_ref().to_string());
        match value.get_ref() {
            DeValue::Table(inner) => walk(inner, path, out),
            other => {
                out.insert(path.clone(), render(other));
            }
        }
        path.pop();
    }
}

/// A value as a person reads it: strings quoted, numbers as their value, lists and tables
/// inline.
fn render(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => format!("{s:?}"),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map_or_else(|_| i.as_str().to_owned(), |n| n.to_string()),
        DeValue::Float(f) => f.as_str().to_owned(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(items) => {
            let shown: Vec<String> = items.iter().map(|i| render(i.get_ref())).collect();
            format!("[{}]", shown.join(", "))
        }
        DeValue::Table(t) => {
            let shown: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {}", k.get_ref(), render(v.get_ref())))
                .collect();
            format!("{{{}}}", shown.join(", "))
        }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
