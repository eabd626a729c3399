//! Entry points: find the config file, read it, and turn it into a [`Config`] or a list of
//! problems.
//!
//! Parsing is separate from finding the file so callers (and tests) can validate text without
//! touching the file system.

use std::path::{Path, PathBuf};

use toml::de::DeTable;

use crate::env::{Env, non_empty};
use crate::reader::Reader;
use crate::source::{Recording, Source};
use crate::{Config, ConfigError, Problem, Schema, StoreConfig, apart, checks, schema, syntax};

/// The file name looked for at the workspace root.
pub const FILE_NAME: &str = "tether.toml";

/// The variable naming another config file (relative paths are resolved against the workspace
/// root).
pub const CONFIG_ENV: &str = "TETHER_CONFIG";

/// A loaded config and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The validated config, with the environment applied.
    pub config: Config,
    /// The file read; `None` when no `tether.toml` exists and defaults were used.
    pub source: Option<PathBuf>,
    /// Problems that leave the config usable (e.g. a channel that lacks its settings and is
    /// left out); `tether validate` lists them.
    pub warnings: Vec<Problem>,
    /// What the config was read from (the text, the file, the variables that configure), to
    /// record with a run.
    pub input: Source,
}

/// Loads `<workspace_root>/tether.toml`, or the file named by `TETHER_CONFIG`, against
/// `schema` (the core tables and the ones its caller's integrations declare).
///
/// A missing `tether.toml` means defaults (plus the environment), not an error; a missing file
/// named by `TETHER_CONFIG` is [`ConfigError::NotFound`]. The file is read bounded: a regular
/// file only (never blocking on a FIFO), at most [`crate::MAX_CONFIG_BYTES`].
pub fn load(schema: &Schema, workspace_root: &Path, env: &dyn Env) -> Result<Loaded, ConfigError> {
    let (input, parsed) = read(schema, workspace_root, env)?;
    let (config, warnings) = parsed?;
    Ok(Loaded {
        config,
        source: input.found.then(|| input.file.clone()),
        warnings,
        input,
    })
}

/// A configuration parsed, with its warnings, or why it is not valid.
pub type Parsed = Result<(Config, Vec<Problem>), ConfigError>;

/// What `load` would read now, and what it says: the source even when the config is invalid
/// (a run's record is compared with it), or an error when the file cannot be read at all.
pub fn read(
    schema: &Schema,
    workspace_root: &Path,
    env: &dyn Env,
) -> Result<(Source, Parsed), ConfigError> {
    let recording = Recording::new(env);
    let (path, named) = config_path(workspace_root, &recording);
    let (text, found) = match crate::file::read(&path) {
        Ok(text) => (text, true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !named => (String::new(), false),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(ConfigError::NotFound { path });
        }
        Err(cause) => return Err(ConfigError::Io { path, cause }),
    };
    let parsed = parse_with_warnings(schema, &text, &path, &recording);
    let input = Source {
        file: path,
        found,
        text,
        vars: recording.into_read(),
        schema: schema.clone(),
    };
    Ok((input, parsed))
}

/// The config file of `workspace_root`: the one `TETHER_CONFIG` names (`true`), else
/// `tether.toml`.
fn config_path(workspace_root: &Path, env: &dyn Env) -> (PathBuf, bool) {
    match non_empty(env, CONFIG_ENV) {
        Some(path) => (workspace_root.join(path), true),
        None => (workspace_root.join(FILE_NAME), false),
    }
}

/// Where the workspace's store is (`[store]` and `TETHER_STORE_URL`), reading nothing else of
/// the config: a command that only reads or answers (`tether answer`, `tether status`) works
/// whatever the rest of the file says. Problems are only those of `[store]` (or the syntax).
pub fn load_store(workspace_root: &Path, env: &dyn Env) -> Result<StoreConfig, ConfigError> {
    let (path, named) = config_path(workspace_root, env);
    let text = match crate::file::read(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !named => String::new(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(ConfigError::NotFound { path });
        }
        Err(cause) => return Err(ConfigError::Io { path, cause }),
    };
    let schema = Schema::core();
    let mut reader = Reader::new(&text, &path, &schema);
    let (doc, errors) = DeTable::parse_recoverable(&text);
    let mut problems: Vec<Problem> = errors
        .iter()
        .map(|err| syntax::problem(&text, &path, &reader, err))
        .collect();
    let store = if problems.is_empty() {
        schema::read_store(doc.get_ref(), &mut reader, env)
    } else {
        StoreConfig::default()
    };
    problems.append(&mut reader.problems);
    if problems.is_empty() {
        Ok(store)
    } else {
        Err(ConfigError::Invalid {
            file: path,
            problems,
        })
    }
}

/// Parses and validates config text against `schema`. `file` is only used to label problems.
///
/// On failure the error is [`ConfigError::Invalid`] with every problem found.
pub fn parse(
    schema: &Schema,
    text: &str,
    file: &Path,
    env: &dyn Env,
) -> Result<Config, ConfigError> {
    check(schema, text, file, env).map_err(|problems| ConfigError::Invalid {
        file: file.to_path_buf(),
        problems,
    })
}

/// Like [`parse`], also returning the warnings (problems that leave the config usable).
pub fn parse_with_warnings(
    schema: &Schema,
    text: &str,
    file: &Path,
    env: &dyn Env,
) -> Result<(Config, Vec<Problem>), ConfigError> {
    let (config, warnings) = check_with_warnings(schema, text, file, env);
    match config {
        Ok(config) => Ok((config, warnings)),
        Err(problems) => Err(ConfigError::Invalid {
            file: file.to_path_buf(),
            problems,
        }),
    }
}

/// Like [`parse`], but returns the bare list of problems, as `tether validate` prints them.
pub fn check(
    schema: &Schema,
    text: &str,
    file: &Path,
    env: &dyn Env,
) -> Result<Config, Vec<Problem>> {
    check_with_warnings(schema, text, file, env).0
}

/// [`check`], plus the warnings (empty when the text does not parse).
fn check_with_warnings(
    schema: &Schema,
    text: &str,
    file: &Path,
    env: &dyn Env,
) -> (Result<Config, Vec<Problem>>, Vec<Problem>) {
    let mut reader = Reader::new(text, file, schema);
    let (doc, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        // Checking a half-parsed document would report problems that are not there.
        let problems = errors
            .iter()
            .map(|err| syntax::problem(text, file, &reader, err))
            .collect();
        return (Err(problems), Vec::new());
    }
    let (config, marks) = schema::read(doc.get_ref(), &mut reader, env);
    checks::run(&config, &marks, &mut reader);
    apart::check(&config, doc.get_ref(), &mut reader);
    let mut problems = reader.problems;
    let mut warnings = reader.warnings;
    // File order, then the problems that have no line (environment values, cross-table rules).
    warnings.sort_by_key(|p| (p.line.is_none(), p.line));
    if problems.is_empty() {
        return (Ok(config), warnings);
    }
    problems.sort_by_key(|p| (p.line.is_none(), p.line));
    (Err(problems), warnings)
}
