//! Whether a configuration file holds a credential: a token, a password, a credential
//! provider, or a URL with a password in it, under any key at any depth. The sandbox reads a
//! toolchain's configuration only when it holds none (`~/.cargo/config.toml` with a registry
//! token, a Node prefix's `etc/npmrc` with an `_authToken`, a Python's `pip.conf` with an index
//! password).
//!
//! Each file is parsed with its format's parser ([`Format`]): TOML with the `toml` crate (inline
//! tables, dotted keys and arrays of tables are tables like any other), INI and npmrc with small
//! strict parsers here. Every key is looked at with the path of tables it lies in, every string
//! value for a URL with a password. Unsure means yes: a file that does not parse, is too large
//! or cannot be read is taken to hold one. A key naming a variable (`_authToken=${NPM_TOKEN}`)
//! counts too: the file then says where a credential is.

use std::io::Read as _;
use std::path::Path;

/// The largest configuration file read; a larger one is taken to hold a credential.
const MAX_CONFIG: u64 = 256 * 1024;

/// Keys (lowercase) whose non-empty value is a credential.
const SECRET_KEYS: &[&str] = &[
    "token",
    "_authtoken",
    "authtoken",
    "auth_token",
    "auth-token",
    "_auth",
    "auth",
    "_password",
    "password",
    "passwd",
    "secret",
    "secret-key",
    "secret_key",
    "client_secret",
    "client-secret",
    "oauth_token",
    "access_token",
    "access-token",
    "refresh_token",
    "api_key",
    "api-key",
    "apikey",
    "api_token",
    "private_key",
    "private-key",
];

/// Keys (lowercase) whose non-empty value names a program or a store that hands out a
/// credential: cargo's providers, pip's keyring, git's and docker's helpers.
const PROVIDER_KEYS: &[&str] = &[
    "credential-provider",
    "credential-providers",
    "global-credential-providers",
    "credential-process",
    "keyring-provider",
    "keyring_provider",
    "credential-helper",
    "credential_helper",
    "credhelpers",
    "credsstore",
];

/// Tables (lowercase) every key of which names a credential provider (cargo's aliases).
const PROVIDER_TABLES: &[&str] = &["credential-alias"];

/// A configuration file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML (cargo's `config.toml`).
    Toml,
    /// INI, as Python's `configparser` reads it (`pip.conf`).
    Ini,
    /// npm's `key=value` lines (`npmrc`).
    Npmrc,
}

/// Whether the file at `path`, in `format`, holds a credential (or cannot be read to tell).
pub fn in_file(path: &Path, format: Format) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return true;
    };
    let mut bytes = Vec::new();
    if file.take(MAX_CONFIG + 1).read_to_end(&mut bytes).is_err() || bytes.len() as u64 > MAX_CONFIG
    {
        return true;
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) => in_text(text, format),
        Err(_) => true,
    }
}

/// Whether `text`, in `format`, holds a credential; one that does not parse does.
pub fn in_text(text: &str, format: Format) -> bool {
    let entries = match format {
        Format::Toml => toml_entries(text),
        Format::Ini => ini_entries(text),
        Format::Npmrc => npmrc_entries(text),
    };
    entries.is_none_or(|entries| entries.iter().any(Entry::holds))
}

/// One value of a configuration file with the path of keys leading to it.
#[derive(Debug)]
struct Entry {
    /// The keys, outermost first (tables, then the key), lowercase.
    keys: Vec<String>,
    /// The value; `None` for one that is not a string (a table, a number), which counts as
    /// non-empty.
    value: Option<String>,
}

impl Entry {
    fn holds(&self) -> bool {
        let empty = self.value.as_deref().is_some_and(|v| v.trim().is_empty());
        let last = self.keys.last().map(String::as_str).unwrap_or_default();
        let names = |list: &[&str], key: &str| list.contains(&key);
        let secret = names(SECRET_KEYS, last)
            || names(PROVIDER_KEYS, last)
            || self.keys.iter().any(|k| names(PROVIDER_TABLES, k))
            || (last == "helper" && self.keys.iter().any(|k| k.starts_with("credential")));
        (secret && !empty) || self.value.as_deref().is_some_and(url_with_password)
    }
}

/// Every value of a TOML document, at any depth; `None` when it does not parse.
fn toml_entries(text: &str) -> Option<Vec<Entry>> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let mut out = Vec::new();
    walk_toml(&mut Vec::new(), &toml::Value::Table(table), &mut out);
    Some(out)
}

fn walk_toml(keys: &mut Vec<String>, value: &toml::Value, out: &mut Vec<Entry>) {
    match value {
        toml::Value::Table(table) => {
            for (key, value) in table {
                keys.push(key.to_ascii_lowercase());
                walk_toml(keys, value, out);
                keys.pop();
            }
            if !keys.is_empty() {
                // The table itself, under its key (`token = { … }`).
                let empty = table.is_empty();
                out.push(Entry {
                    keys: keys.clone(),
                    value: empty.then(String::new),
                });
            }
        }
        toml::Value::Array(items) => {
            for item in items {
                walk_toml(keys, item, out);
            }
            out.push(Entry {
                keys: keys.clone(),
                value: items.is_empty().then(String::new),
            });
        }
        toml::Value::String(s) => out.push(Entry {
            keys: keys.clone(),
            value: Some(s.clone()),
        }),
        // A number, a boolean, a date: not empty.
        _ => out.push(Entry {
            keys: keys.clone(),
            value: None,
        }),
    }
}

/// Every value of an INI file as Python's `configparser` reads it (sections, `key = value` or
/// `key: value`, indented continuation lines, `#` and `;` comments); `None` for a line that is
/// none of these.
fn ini_entries(text: &str) -> Option<Vec<Entry>> {
    let mut out: Vec<Entry> = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A continuation of the value before it.
            let last = out.last_mut()?;
            let value = last.value.get_or_insert_with(String::new);
            value.push('\n');
            value.push_str(trimmed);
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[') {
            section = name.strip_suffix(']')?.trim().to_ascii_lowercase();
            continue;
        }
        let at = trimmed.find(['=', ':'])?;
        let key = trimmed[..at].trim().to_ascii_lowercase();
        if key.is_empty() {
            return None;
        }
        let mut keys: Vec<String> = section.split('.').map(str::to_owned).collect();
        keys.push(key);
        out.push(Entry {
            keys,
            value: Some(trimmed[at + 1..].trim().to_owned()),
        });
        out.extend(whole_line(trimmed));
    }
    Some(out)
}

/// A line as one value, for a URL split by the key's separator (`https://user:pass@host` on
/// a line of its own reads as the key `https`).
fn whole_line(line: &str) -> Option<Entry> {
    url_with_password(line).then(|| Entry {
        keys: Vec::new(),
        value: Some(line.to_owned()),
    })
}

/// Every value of an npmrc (`key=value` lines, `[section]`s, `#` and `;` comments; a key may
/// be a registry's `//host/path/:field` or a scope's `@scope:registry`); `None` for a line that
/// is none of these.
fn npmrc_entries(text: &str) -> Option<Vec<Entry>> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[') {
            section = name.strip_suffix(']')?.trim().to_ascii_lowercase();
            continue;
        }
        let (key, value) = trimmed.split_once('=')?;
        let key = key.trim().trim_end_matches("[]").to_ascii_lowercase();
        if key.is_empty() {
            return None;
        }
        // `//registry.npmjs.org/:_authToken`: the field after the registry's URL.
        let field = key.rsplit(':').next().unwrap_or(&key).to_owned();
        let mut keys = vec![section.clone(), key.clone()];
        if field != key {
            keys.push(field);
        }
        let value = value.trim().trim_matches(['"', '\'']).to_owned();
        out.push(Entry {
            keys,
            value: Some(value),
        });
        out.extend(whole_line(trimmed));
    }
    Some(out)
}

/// Whether `value` holds a URL with a password (`https://user:pass@host`).
fn url_with_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest
            .split(['/', '"', '\'', ' ', '?', '#', '\n', ',', ';'])
            .next()
            .unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

#[cfg(test)]
#[path = "credential_tests.rs"]
mod tests;
