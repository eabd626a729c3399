//! From a URL to connection settings, with the password found where PostgreSQL's own tools find
//! it: the `PGPASSWORD` variable, else the password file (`PGPASSFILE`, or `~/.pgpass`), whose
//! lines are `host:port:database:user:password` with `*` for any and `\:` / `\\` escapes. A
//! password file others may read is ignored, as `psql` ignores it.
//!
//! The password never leaves the returned `Config`: errors and [`redacted`] name the server by
//! host, port and database only.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use tokio_postgres::Config;
use tokio_postgres::config::Host;

/// The most of a password file read.
const PASSFILE_LIMIT: u64 = 64 * 1024;

/// A URL that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    /// It does not parse as a PostgreSQL URL (`postgres://user@host:port/database`).
    #[error("`{shown}` is not a PostgreSQL URL (postgres://user@host:port/database): {reason}")]
    Invalid {
        /// The URL without its password.
        shown: String,
        /// What the parser said.
        reason: String,
    },
}

/// The connection settings `url` names, with the password from the environment or the password
/// file when the URL carries none.
pub fn config_from_url(url: &str) -> Result<Config, UrlError> {
    config_with(url, &|name| std::env::var(name).ok())
}

/// [`config_from_url`] with the environment read through `var` (tests pass their own).
pub fn config_with(url: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Config, UrlError> {
    let mut config: Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| UrlError::Invalid {
            shown: redacted(url),
            reason: e.to_string(),
        })?;
    if config.get_user().is_none()
        && let Some(user) = var("PGUSER").or_else(|| var("USER"))
    {
        config.user(&user);
    }
    if config.get_application_name().is_none() {
        config.application_name("tether");
    }
    if config.get_password().is_none()
        && let Some(password) = var("PGPASSWORD")
            .filter(|p| !p.is_empty())
            .or_else(|| passfile_password(&config, var))
    {
        config.password(password);
    }
    Ok(config)
}

/// `url` with any password replaced by `***`, for messages.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The password file's entry for `config`'s first host, port, database and user.
fn passfile_password(config: &Config, var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let path = var("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".pgpass")))?;
    let text = read_passfile(&path)?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        #[cfg(unix)]
        Some(Host::Unix(dir)) => dir.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default();
    let database = config.get_dbname().unwrap_or(user);
    text.lines()
        .filter_map(parse_line)
        .find(|entry| entry.matches([&host, &port, database, user]))
        .map(|entry| entry.fields[4].clone())
}

/// The password file's text, unless it is not a regular file, is larger than
/// [`PASSFILE_LIMIT`], or others may read it (then a warning says why it was ignored).
fn read_passfile(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(
            path = %path.display(),
            "the password file is readable by others and is ignored; chmod 0600 it"
        );
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(PASSFILE_LIMIT)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// One line of a password file: host, port, database, user, password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) fields: [String; 5],
}

impl Entry {
    /// Whether the first four fields match (`*` matches anything).
    fn matches(&self, wanted: [&str; 4]) -> bool {
        self.fields
            .iter()
            .zip(wanted)
            .all(|(field, want)| field == "*" || field == want)
    }
}

/// Parses one line: `None` for a comment, a blank line, or one without five fields.
pub(crate) fn parse_line(line: &str) -> Option<Entry> {
    if line.trim_start().starts_with('#') || line.trim().is_empty() {
        return None;
    }
    let mut fields: Vec<String> = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut()?.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            other => fields.last_mut()?.push(other),
        }
    }
    let fields: [String; 5] = fields.try_into().ok()?;
    Some(Entry { fields })
}

#[cfg(test)]
#[path = "connect_tests.rs"]
mod tests;
