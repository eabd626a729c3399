//! Typed reads from a parsed TOML table, each recording a [`Problem`] instead of failing.
//!
//! Serde would stop at the first error and lose the line of most of them; this walker reads the
//! span-carrying `DeTable` by hand so `tether validate` can list every problem with its line.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use crate::{Problem, Schema, keys, suggest, values};

/// A table being read: its dotted path (empty at the top level) and where its header is.
pub(crate) struct Table<'t, 'i> {
    pub(crate) path: &'static str,
    pub(crate) entries: &'t DeTable<'i>,
    pub(crate) span: Option<Range<usize>>,
}

type Entry<'t, 'i> = (&'t Spanned<DeString<'i>>, &'t Spanned<DeValue<'i>>);

/// Collects problems while reading one file.
pub(crate) struct Reader<'a> {
    file: &'a Path,
    /// The tables and keys there are.
    pub(crate) schema: &'a Schema,
    line_starts: Vec<usize>,
    pub(crate) problems: Vec<Problem>,
    /// Problems that do not make the config unusable (a channel left out, for example).
    pub(crate) warnings: Vec<Problem>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &str, file: &'a Path, schema: &'a Schema) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            file,
            schema,
            line_starts,
            problems: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// 1-based line of a byte offset.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset)
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.line(offset);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let column = text
            .get(start..offset.min(text.len()))
            .map_or(0, |s| s.chars().count());
        (line, column + 1)
    }

    /// Records a problem at `span` (or without a line).
    pub(crate) fn report(
        &mut self,
        span: Option<Range<usize>>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) {
        let line = span.map(|s| self.line(s.start));
        self.problems.push(Problem {
            file: self.file.to_path_buf(),
            line,
            column: None,
            key: key.into(),
            message: message.into(),
        });
    }

    /// Records a warning at `span`: something to fix that does not make the config unusable.
    pub(crate) fn warn(
        &mut self,
        span: Option<Range<usize>>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) {
        let line = span.map(|s| self.line(s.start));
        self.warnings.push(Problem {
            file: self.file.to_path_buf(),
            line,
            column: None,
            key: key.into(),
            message: message.into(),
        });
    }

    /// Flags every key of `table` not in `allowed`. In tables that take a key variable, a key
    /// that looks like a credential gets "keys never live in files" and `secret_advice` (what
    /// to do instead).
    pub(crate) fn unknown_keys(
        &mut self,
        table: &Table,
        allowed: &[&str],
        secret_advice: Option<&str>,
    ) {
        for (key, value) in table.entries.iter() {
            let name = key.get_ref().as_ref();
            if allowed.contains(&name) {
                continue;
            }
            let message = match secret_advice {
                Some(advice) if keys::is_secret_like(name) => {
                    format!("API keys never live in files; remove `{name}`, then {advice}")
                }
                _ => unknown_key_message(
                    self.schema,
                    table.path,
                    name,
                    value.get_ref().is_table(),
                    allowed,
                ),
            };
            self.report(Some(key.span()), path_of(table.path, name), message);
        }
    }

    /// The sub-table `key`, or `None` (with a problem when it is not a table).
    pub(crate) fn table<'t, 'i>(
        &mut self,
        table: &Table<'t, 'i>,
        key: &'static str,
    ) -> Option<Table<'t, 'i>> {
        let (k, v) = entry(table, key)?;
        match v.get_ref() {
            DeValue::Table(entries) => Some(Table {
                path: key,
                entries,
                span: Some(k.span()),
            }),
            other => {
                let message = format!("must be a table ([{key}]), got {}", article(other));
                self.report(Some(k.span()), path_of(table.path, key), message);
                None
            }
        }
    }

    /// The tables of the array of tables `key` (`[[judge.panel]]` entries), each named `path`
    /// in problems; none (with a problem) when it is not a list of tables.
    pub(crate) fn tables<'t, 'i>(
        &mut self,
        table: &Table<'t, 'i>,
        key: &str,
        path: &'static str,
    ) -> Vec<Table<'t, 'i>> {
        let Some(items) = self.array(table, key, "tables") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            match item.get_ref() {
                DeValue::Table(entries) => out.push(Table {
                    path,
                    entries,
                    span: Some(item.span()),
                }),
                other => {
                    let message = format!(
                        "must be a list of tables ([[{path}]]), got {}",
                        article(other)
                    );
                    self.report(Some(item.span()), path, message);
                }
            }
        }
        out
    }

    /// Records that a required key is absent, listing what the table needs.
    pub(crate) fn missing(&mut self, table: &Table, key: &str, required: &[&str]) {
        let needs: Vec<String> = required.iter().map(|k| format!("`{k}`")).collect();
        let message = format!("missing; [{}] needs {}", table.path, needs.join(", "));
        self.missing_with(table, key, message);
    }

    /// Records that a key is absent, at the table's header.
    pub(crate) fn missing_with(&mut self, table: &Table, key: &str, message: impl Into<String>) {
        self.report(table.span.clone(), path_of(table.path, key), message);
    }

    /// A string that passes `check`.
    pub(crate) fn string(
        &mut self,
        table: &Table,
        key: &str,
        check: values::Check,
    ) -> Option<String> {
        let (_, v) = entry(table, key)?;
        let path = path_of(table.path, key);
        let Some(text) = v.get_ref().as_str() else {
            let message = format!("must be a string, got {}", article(v.get_ref()));
            self.report(Some(v.span()), path, message);
            return None;
        };
        match check(text) {
            Ok(()) => Some(text.to_owned()),
            Err(message) => {
                self.report(Some(v.span()), path, message);
                None
            }
        }
    }

    /// An integer in `min..=max`, converted to `T` (which must hold the whole range).
    pub(crate) fn int<T: TryFrom<i64>>(
        &mut self,
        table: &Table,
        key: &str,
        min: i64,
        max: i64,
    ) -> Option<T> {
        let (_, v) = entry(table, key)?;
        let path = path_of(table.path, key);
        let range = format!("between {min} and {max}");
        let DeValue::Integer(int) = v.get_ref() else {
            let message = format!("must be an integer {range}, got {}", article(v.get_ref()));
            self.report(Some(v.span()), path, message);
            return None;
        };
        let value = i64::from_str_radix(int.as_str(), int.radix())
            .ok()
            .filter(|n| (min..=max).contains(n));
        let converted = value.and_then(|n| T::try_from(n).ok());
        if converted.is_none() {
            self.report(Some(v.span()), path, format!("must be {range}, got {int}"));
        }
        converted
    }

    /// A boolean.
    pub(crate) fn bool(&mut self, table: &Table, key: &str) -> Option<bool> {
        let (_, v) = entry(table, key)?;
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            other => {
                let message = format!("must be true or false, got {}", article(other));
                self.report(Some(v.span()), path_of(table.path, key), message);
                None
            }
        }
    }

    /// One of `choices`, by its spelling.
    pub(crate) fn choice<T: Copy>(
        &mut self,
        table: &Table,
        key: &str,
        choices: &[(&'static str, T)],
    ) -> Option<T> {
        let (_, v) = entry(table, key)?;
        self.choice_value(v, &path_of(table.path, key), "", choices)
    }

    fn choice_value<T: Copy>(
        &mut self,
        value: &Spanned<DeValue>,
        path: &str,
        what: &str,
        choices: &[(&'static str, T)],
    ) -> Option<T> {
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        let allowed = names.join(" | ");
        let Some(text) = value.get_ref().as_str() else {
            let got = article(value.get_ref());
            let message = format!("{what}must be one of {allowed}, got {got}");
            self.report(Some(value.span()), path, message);
            return None;
        };
        if let Some((_, choice)) = choices.iter().find(|(name, _)| *name == text) {
            return Some(*choice);
        }
        let mut message = format!("{what}must be one of {allowed}, got {text:?}");
        if let Some(close) = suggest::closest(text, &names) {
            message.push_str(&format!("; did you mean {close:?}?"));
        }
        self.report(Some(value.span()), path, message);
        None
    }

    /// A list of strings, each passing `check`; `None` if the list or any item is invalid.
    pub(crate) fn string_list(
        &mut self,
        table: &Table,
        key: &str,
        check: impl Fn(&str) -> Result<(), String>,
    ) -> Option<Vec<String>> {
        let items = self.array(table, key, "strings")?;
        let path = path_of(table.path, key);
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let checked = match item.get_ref().as_str() {
                Some(text) => check(text).map(|()| text.to_owned()),
                None => Err(format!("must be a string, got {}", article(item.get_ref()))),
            };
            match checked {
                Ok(text) => out.push(text),
                Err(message) => self.report(
                    Some(item.span()),
                    &path,
                    format!("item {}: {message}", i + 1),
                ),
            }
        }
        (out.len() == items.len()).then_some(out)
    }

    /// A list of distinct choices; `None` if the list or any item is invalid.
    pub(crate) fn choice_list<T: Copy + PartialEq>(
        &mut self,
        table: &Table,
        key: &str,
        choices: &[(&'static str, T)],
    ) -> Option<Vec<T>> {
        let items = self.array(table, key, "names")?;
        let path = path_of(table.path, key);
        let mut out: Vec<T> = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let what = format!("item {}: ", i + 1);
            match self.choice_value(item, &path, &what, choices) {
                Some(choice) if out.contains(&choice) => {
                    let name = item.get_ref().as_str().unwrap_or_default();
                    self.report(
                        Some(item.span()),
                        &path,
                        format!("{name:?} is listed twice"),
                    );
                    ok = false;
                }
                Some(choice) => out.push(choice),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn array<'t, 'i>(
        &mut self,
        table: &Table<'t, 'i>,
        key: &str,
        of: &str,
    ) -> Option<&'t [Spanned<DeValue<'i>>]> {
        let (_, v) = entry(table, key)?;
        match v.get_ref() {
            DeValue::Array(items) => Some(items),
            other => {
                let message = format!("must be a list of {of}, got {}", article(other));
                self.report(Some(v.span()), path_of(table.path, key), message);
                None
            }
        }
    }
}

/// The entry `key` of `table`, with its key's and value's spans.
pub(crate) fn entry<'t, 'i>(table: &Table<'t, 'i>, key: &str) -> Option<Entry<'t, 'i>> {
    table.entries.get_key_value(key)
}

/// `table.key`, or `key` at the top level.
pub(crate) fn path_of(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_owned()
    } else {
        format!("{table}.{key}")
    }
}

fn unknown_key_message(
    schema: &Schema,
    table: &str,
    key: &str,
    is_table: bool,
    allowed: &[&str],
) -> String {
    let what = if is_table {
        "unknown table"
    } else {
        "unknown key"
    };
    if let Some(close) = suggest::closest(key, allowed) {
        return format!("{what}; did you mean `{close}`?");
    }
    let homes = schema.tables_with(key, table);
    if !homes.is_empty() {
        let homes: Vec<String> = homes.iter().map(|t| format!("[{t}]")).collect();
        return format!("{what}; `{key}` belongs in {}", homes.join(" or "));
    }
    if table.is_empty() {
        format!("{what}; the top level has {}", allowed.join(", "))
    } else {
        format!("{what}; [{table}] has {}", allowed.join(", "))
    }
}

/// "a string", "an integer", … for messages.
fn article(value: &DeValue) -> String {
    let kind = value.type_str();
    let a = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{a} {kind}")
}
